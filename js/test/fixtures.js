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

// Serverless job panels: JobPanel and HealthPanel traits as the notebook side sets them.

const SEED_WORDS =
  "The quick brown fox jumps over the lazy dog while the GPU hums and tokens stream in".split(" ");

/** Chunks shaped like the seed's stream sample: `text` list plus token counts. */
export function tokenChunks(n, start = 0) {
  return Array.from({ length: n }, (_, k) => ({
    input_tokens: 12,
    output_tokens: start + k + 1,
    text: [`${SEED_WORDS[(start + k) % SEED_WORDS.length]} `],
  }));
}

export function seedMetrics(overrides = {}) {
  return {
    avg_gen_throughput: 41.7,
    avg_prompt_throughput: 512.3,
    cpu_kv_cache_usage: 0,
    gpu_kv_cache_usage: 0.12,
    input_tokens: 12,
    output_tokens: 90,
    pending: 0,
    running: 1,
    stream_index: 89,
    swapped: 0,
    scenario: "stream",
    ...overrides,
  };
}

function jobTraits(job, extra = {}) {
  return {
    job,
    status: job.status,
    tail: [],
    chunks: 0,
    rate: {},
    error: "",
    busy: "",
    connection: "ok",
    ...extra,
  };
}

export function streamingJob() {
  return jobTraits(
    { id: "job-7f3a91", endpointId: "stream-demo", status: "IN_PROGRESS", delayTime: 412 },
    { rate: { tokensPerSecond: 42.3, chunksPerSecond: 42.3, metrics: seedMetrics() } },
  );
}

export function jsonJob() {
  const outputs = [
    "epoch 1 starting\n",
    { epoch: 1, loss: 0.4213, acc: 0.871, lr: 0.0003 },
    "epoch 2 starting\n",
    { epoch: 2, loss: 0.3121, acc: 0.902, lr: 0.0003 },
  ];
  return jobTraits(
    {
      id: "job-json01",
      endpointId: "trainer",
      status: "COMPLETED",
      delayTime: 35,
      executionTime: 2480,
    },
    {
      tail: outputs.map((output, i) => ({ i, output })),
      chunks: outputs.length,
      rate: { tokensPerSecond: 0, chunksPerSecond: 1.6 },
    },
  );
}

export function failedJob() {
  return jobTraits(
    {
      id: "job-b00m",
      endpointId: "demo",
      status: "FAILED",
      delayTime: 12,
      executionTime: 87,
      error: {
        type: "ValueError",
        message: "prompt must not be empty",
        traceback:
          'Traceback (most recent call last):\n  File "/work/handler.py", line 7, in handler\n' +
          '    raise ValueError("prompt must not be empty")\nValueError: prompt must not be empty',
      },
    },
    { connection: "reconnecting" },
  );
}

export function healthBody({ completed = 120, failed = 2, inProgress = 3, inQueue = 0 } = {}) {
  return {
    jobs: { completed, failed, inProgress, inQueue, retried: 1 },
    workers: { idle: 1, running: 3 },
  };
}

export function healthTraits() {
  return {
    endpointId: "stream-demo",
    health: healthBody(),
    error: "",
    connection: "ok",
    updated: new Date().toISOString(),
  };
}
