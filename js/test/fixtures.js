// Pod and cluster records shaped like the service's responses (REST v2 Pod / Cluster).

export function gpuPod(overrides = {}) {
  return {
    id: "pod_abc123",
    name: "my-training-pod",
    status: "RUNNING",
    actions: ["stop", "restart", "terminate"],
    image: "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
    args: "",
    disk: 50,
    mounts: {},
    ports: ["8888/http", "22/tcp"],
    env: { JUPYTER_PASSWORD: "••••••", PUBLIC_KEY: "••••••", HF_TOKEN: "••••••", MODE: "train" },
    registry: null,
    gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 },
    cloud: "SECURE",
    dataCenterId: "US-TX-3",
    cudaVersion: "12.8",
    ssh: {
      proxy: {
        host: "ssh.runpod.io",
        port: 22,
        username: "7h9k2m4n6p-64411eb2",
        command: "ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io",
      },
      direct: {
        host: "45.23.12.1",
        port: 22001,
        username: "root",
        command: "ssh root@45.23.12.1 -p 22001",
      },
    },
    template: null,
    cost: 0.69,
    locked: false,
    globalNetworking: { enabled: false },
    runtime: {
      uptime: 3725,
      gpus: [
        { util: 94, memoryUtil: 78 },
        { util: 12, memoryUtil: 30 },
      ],
      cpu: { util: 45 },
      memory: { util: 61 },
      ports: [
        { private: 8888, public: 43210, type: "http", ip: "45.23.12.1" },
        { private: 22, public: 22001, type: "tcp", ip: "45.23.12.1" },
      ],
    },
    createdAt: "2026-03-13T20:00:00Z",
    startedAt: "2026-03-13T20:01:00Z",
    ...overrides,
  };
}

export function provisioningPod(overrides = {}) {
  return gpuPod({
    status: "PROVISIONING",
    actions: ["start", "terminate"],
    ssh: { proxy: null, direct: null },
    runtime: {},
    startedAt: null,
    dataCenterId: null,
    cudaVersion: null,
    ...overrides,
  });
}

export function cpuPod(overrides = {}) {
  const pod = gpuPod({
    id: "pod_cpu001",
    name: "cpu-box",
    cpu: { id: "cpu5c", vcpuCount: 4, memory: 16 },
    cost: 0.12,
    cudaVersion: null,
    runtime: { uptime: 10, gpus: [], cpu: { util: 5 }, memory: { util: 20 }, ports: [] },
    ...overrides,
  });
  delete pod.gpu;
  return pod;
}

export function cluster(overrides = {}) {
  return {
    id: "cluster_abc123",
    name: "my-training-cluster",
    type: "SLURM",
    compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 3 },
    pods: { total: 3, byStatus: { RUNNING: 2, STARTING: 1 } },
    dataCenterId: "US-TX-3",
    network: { cidr: "10.65.0.0/16", vxlanId: 42, vxlanPort: 4789 },
    primary: { podId: "pod_node0", status: "RUNNING", sshEndpoint: "1.2.3.4:22001" },
    createdAt: "2026-06-29T20:00:00Z",
    ...overrides,
  };
}

export function member(rank, role, status, ip) {
  return gpuPod({
    id: `pod_node${rank}`,
    name: `my-training-cluster-${rank}`,
    status,
    gpu: { id: "NVIDIA H100 80GB HBM3", count: 8 },
    cluster: { id: "cluster_abc123", rank, ...(role ? { role } : {}), ...(ip ? { ip } : {}) },
  });
}
