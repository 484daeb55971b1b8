# podbook pod guard: stops (or terminates) this pod after PODBOOK_IDLE_STOP seconds with
# nothing going on, or PODBOOK_MAX_RUNTIME seconds after it became RUNNING, whatever it does.
# Idle means: no SSH connection open, no busy kernel on the pod's Jupyter server, no NVIDIA
# GPU at or above PODBOOK_GPU_IDLE_UTIL percent. It acts with the pod-scoped key the service
# puts in the pod (RUNPOD_API_KEY, RUNPOD_POD_ID). Needs sh, awk, and curl or python3.
# It reports on stdout (the pod's log): one line per change, ending in [key=value ...].
# Control: a line "extend SECONDS" or "keep" appended to ${TMPDIR:-/tmp}/podbook-guard/control.
# See podbook's docs/cost-control.md.
set -u
umask 077
idle=${PODBOOK_IDLE_STOP:-0}
limit=${PODBOOK_MAX_RUNTIME:-0}
action=${PODBOOK_IDLE_ACTION:-stop}
gpu_util=${PODBOOK_GPU_IDLE_UTIL:-10}
api=${PODBOOK_API_URL-https://rest.runpod.io}
pod=${RUNPOD_POD_ID:-}
dir=${TMPDIR:-/tmp}/podbook-guard
# Jupyter on its private 8888 (a cluster member's also answers at its cluster address); the
# emulator's process runtime says where it listens instead (RUNPOD_HTTP_PORT_8888, loopback).
jport=${RUNPOD_HTTP_PORT_8888:-8888} jhost=${RUNPOD_CLUSTER_IP:-127.0.0.1}
[ -n "${RUNPOD_HTTP_PORT_8888:-}" ] && jhost=127.0.0.1

say() { printf 'podbook-guard: %s\n' "$*"; }

dur() {
    s=$1 out=""
    for unit in 86400:d 3600:h 60:m 1:s; do
        size=${unit%%:*}
        if [ "$s" -ge "$size" ]; then out="$out$((s / size))${unit#*:}"; s=$((s % size)); fi
    done
    printf '%s' "${out:-0s}"
}

# ---- HTTP: curl, else python3 (the key never goes on a command line)
quote() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
if command -v curl >/dev/null 2>&1; then
    call() { # METHOD PATH [BODY] [MAX SECONDS]: the body on stdout; fails unless 2xx
        printf 'header = "Authorization: Bearer %s"\n' "$(quote "${RUNPOD_API_KEY:-}")" |
            curl -K - -fsS -m "${4:-10}" -X "$1" -H 'Content-Type: application/json' \
                ${3:+--data "$3"} "$api$2" 2>/dev/null
    }
    jupyter() { # GET PATH with the session cookie; logs in with JUPYTER_PASSWORD once
        base=http://$jhost:$jport jar=$dir/jupyter.cookies
        out=$(curl -sS -m 5 -b "$jar" -c "$jar" "$base$1" 2>/dev/null)
        case $out in \[* | \{*) [ "${out#*Forbidden}" = "$out" ] && { printf '%s' "$out"; return 0; } ;; esac
        curl -sS -m 5 -b "$jar" -c "$jar" -o /dev/null "$base/login" 2>/dev/null || return 1
        xsrf=$(awk '$6 == "_xsrf" { v = $7 } END { print v }' "$jar" 2>/dev/null)
        printf 'data-urlencode = "password=%s"\ndata-urlencode = "_xsrf=%s"\n' \
            "$(quote "${JUPYTER_PASSWORD:-}")" "$(quote "$xsrf")" |
            curl -K - -sS -m 5 -b "$jar" -c "$jar" -o /dev/null "$base/login" 2>/dev/null
        curl -sS -m 5 -b "$jar" -c "$jar" "$base$1" 2>/dev/null
    }
elif command -v python3 >/dev/null 2>&1; then
    py='
import http.cookiejar, os, sys, urllib.parse, urllib.request
mode, url = sys.argv[1], sys.argv[2]
if mode == "api":
    method, body, limit = sys.argv[3], sys.argv[4], float(sys.argv[5])
    req = urllib.request.Request(url, data=body.encode() if body else None, method=method)
    req.add_header("Authorization", "Bearer " + os.environ.get("RUNPOD_API_KEY", ""))
    req.add_header("Content-Type", "application/json")
    answered = False
    try:
        with urllib.request.urlopen(req, timeout=limit) as answer:
            answered = True  # a 2xx status came: only the body may still time out
            for line in answer:
                sys.stdout.write(line.decode("utf-8", "replace"))
    except OSError as exc:
        sys.exit(0 if answered and "timed out" in str(exc) else 22)
else:
    jar = http.cookiejar.MozillaCookieJar(sys.argv[3])
    try:
        jar.load(ignore_discard=True)
    except OSError:
        pass
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    def get(path):
        with opener.open(url + path, timeout=5) as answer:
            return answer.read().decode()
    try:
        out = get(sys.argv[4])
    except OSError:
        opener.open(url + "/login", timeout=5).read()
        xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
        form = {"password": os.environ.get("JUPYTER_PASSWORD", ""), "_xsrf": xsrf}
        opener.open(url + "/login", urllib.parse.urlencode(form).encode(), timeout=5).read()
        out = get(sys.argv[4])
    jar.save(ignore_discard=True)
    sys.stdout.write(out)
'
    call() { python3 -c "$py" api "$api$2" "$1" "${3:-}" "${4:-10}" 2>/dev/null; }
    jupyter() { python3 -c "$py" jupyter "http://$jhost:$jport" "$dir/jupyter.cookies" "$1" 2>/dev/null; }
else
    say "not running: this image has neither curl nor python3; install one of them, or stop the pod yourself [state=unavailable reason=no-http-tool]"
    exit 0
fi

if [ -z "$pod" ] || [ -z "${RUNPOD_API_KEY:-}" ] || [ -z "$api" ]; then
    say "not running: RUNPOD_POD_ID, RUNPOD_API_KEY or the API address is missing from the pod's environment [state=unavailable reason=no-pod-key]"
    exit 0
fi
mkdir -p "$dir"

# ---- what counts as activity
ports=""
for p in 22 ${RUNPOD_TCP_PORT_22:-} ${PODBOOK_SSH_PROXY_PORT:-}; do ports="$ports $(printf '%04X' "$p")"; done
ssh_open() { # an established TCP connection to a local SSH port (sessions, scp, sftp, rsync)
    # podbook's emulator in its sandbox mode serves SSH outside the pod's network: it writes
    # how many connections are open to /run/podbook/ssh-* instead
    for count in /run/podbook/ssh-*; do
        [ -f "$count" ] && [ "$(cat "$count" 2>/dev/null)" -gt 0 ] 2>/dev/null && return 0
    done
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v ports="$ports " '
        $1 != "sl" { n = split($2, a, ":"); if ($4 == "01" && index(ports, " " a[n] " ")) found = 1 }
        END { exit !found }'
}
kernel_busy() { # a kernel of the pod's Jupyter server is running code
    [ -n "${JUPYTER_PASSWORD:-}" ] || return 1
    jupyter /api/kernels | grep -q '"execution_state": *"busy"'
}
gpu_busy() {
    command -v nvidia-smi >/dev/null 2>&1 || return 1
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null |
        awk -v t="$gpu_util" '$1 + 0 >= t { b = 1 } END { exit !b }'
}
activity() {
    found=""
    ssh_open && found="$found,ssh"
    kernel_busy && found="$found,kernel"
    gpu_busy && found="$found,gpu"
    printf '%s' "${found#,}"
}
busy_text() {
    case $1 in
        *ssh*) printf 'SSH session open' ;;
        *kernel*) printf 'a Jupyter kernel is running code' ;;
        *) printf 'GPU in use' ;;
    esac
}

# ---- when the pod became RUNNING (runtime.uptime), and where a restarted guard left off
now=$(date +%s) started=""
for _ in 1 2 3 4 5; do
    answer=$(call GET "/v2/pods/$pod") && {
        uptime=$(printf '%s' "$answer" | sed -n 's/.*"uptime": *\([0-9][0-9]*\).*/\1/p' | head -n 1)
        period=$(printf '%s' "$answer" | sed -n 's/.*"startedAt": *"\([^"]*\)".*/\1/p' | head -n 1)
        started=$((now - ${uptime:-0}))
        break
    }
    sleep 2
    now=$(date +%s)
done
if [ -z "$started" ]; then
    say "not running: the API at $api did not accept the pod-scoped key [state=unavailable reason=api-refused]"
    exit 0
fi
since=$now hold=0 off=0 resumed=""
last=$(call GET "/v2/pods/$pod/logs?source=container&tail=500" "" 2 |
    sed -n 's/.*podbook-guard: .*\[\(state=[^]]*\)\].*/\1/p' | tail -n 1)
field() { printf '%s\n' "$last" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
was=$(field started)
if [ -n "$period" ] && [ "$(field period)" = "$period" ] && [ -n "$was" ]; then
    started=$was resumed=1 # the same RUNNING period: a restarted container keeps its deadlines
    hold=$(field hold)
    hold=${hold:-0}
    case $(field state) in
        idle) since=$(field since) ;;
        off) off=1 ;;
    esac
    since=${since:-$now}
fi

# ---- the loop
shortest=$idle
if [ "$limit" -gt 0 ] && { [ "$shortest" -eq 0 ] || [ "$limit" -lt "$shortest" ]; }; then shortest=$limit; fi
tick=$((shortest / 5))
[ "$tick" -lt 1 ] && tick=1
[ "$tick" -gt 15 ] && tick=15
settings="idle=$idle max=$limit action=$action started=$started period=${period:-none}"
what=""
[ "$idle" -gt 0 ] && what="idle stop after $(dur "$idle")"
[ "$limit" -gt 0 ] && what="${what:+$what, }max runtime $(dur "$limit")"
if [ -n "$resumed" ]; then
    say "resumed after a container restart: $what, then $action [state=armed $settings hold=$hold]"
else
    say "armed: $what, then $action [state=armed $settings]"
fi

reported="" idle_ticks=2 failed="" shown=0
deadline_now() {
    deadline=0 why=""
    if [ "$idle" -gt 0 ] && [ -z "$busy" ]; then deadline=$((since + idle)) why=idle; fi
    if [ "$limit" -gt 0 ]; then
        d=$((started + limit))
        if [ "$deadline" -eq 0 ] || [ "$d" -le "$deadline" ]; then deadline=$d why=max; fi
    fi
    if [ "$deadline" -gt 0 ] && [ "$hold" -gt "$deadline" ]; then deadline=$hold; fi
}
take_control() {
    [ -f "$dir/control" ] && mv "$dir/control" "$dir/control.taken" 2>/dev/null || return 1
    while read -r verb amount; do
        case $verb in
            extend)
                # From the deadline the user last saw: the SSH session that wrote this command
                # makes the pod busy (no idle deadline) before this tick reads it.
                base=$deadline
                [ "$base" -lt "$shown" ] && base=$shown
                [ "$base" -lt "$now" ] && base=$now
                case $amount in '' | *[!0-9]*) amount=0 ;; esac
                hold=$((base + amount)) off=0 ;;
            keep) off=1 ;;
            arm) off=0 hold=0 ;;
        esac
    done <"$dir/control.taken"
    rm -f "$dir/control.taken"
}
fire() {
    if [ "$why" = idle ]; then text="after $(dur "$idle") idle"; else text="max runtime $(dur "$limit") reached"; fi
    if [ "$action" = terminate ]; then verb=terminated; else verb=stopped; fi
    if [ "$why" = idle ]; then line="$verb $text"; else line="$verb: $text"; fi
    say "$line [state=fired reason=$why deadline=$deadline $settings hold=$hold]"
    if [ "$action" = terminate ]; then
        call DELETE "/v2/pods/$pod" >/dev/null && exit 0
    else
        call POST "/v2/pods/$pod/action" '{"action":"stop"}' >/dev/null && exit 0
    fi
    [ -z "$failed" ] && say "could not $action the pod through $api; trying again every ${tick}s [state=error $settings hold=$hold]"
    failed=1
}

while :; do
    now=$(date +%s)
    if [ "$off" -eq 1 ]; then
        busy=""
    else
        busy=$(activity)
    fi
    if [ -n "$busy" ]; then since=$now idle_ticks=0; else idle_ticks=$((idle_ticks + 1)); fi
    deadline_now
    [ "$deadline" -gt 0 ] && shown=$deadline
    extended=""
    if take_control; then deadline_now; extended=1; fi
    if [ "$off" -eq 1 ]; then
        key=off
        [ "$key" != "$reported" ] && say "off: keep running chosen; the pod runs until you stop it [state=off $settings]"
        reported=$key
        sleep "$tick"
        continue
    fi
    if [ "$deadline" -gt 0 ] && [ "$now" -ge "$deadline" ]; then fire; fi
    if [ -n "$busy" ]; then
        key="busy $busy $deadline"
        text="busy: $(busy_text "$busy")"
        [ "$deadline" -gt 0 ] && text="$text; max runtime reached in $(dur $((deadline - now)))"
        state="state=busy busy=$busy deadline=$deadline next=${why:-none}"
    else
        key="idle $deadline"
        text="idle; $action in $(dur $((deadline - now)))"
        [ "$why" = max ] && text="$text (max runtime)"
        state="state=idle since=$since deadline=$deadline next=$why"
    fi
    [ -n "$extended" ] && text="extended: $text" && reported=""
    if [ "$key" != "$reported" ] && { [ -n "$busy" ] || [ "$idle_ticks" -ge 2 ] || [ -n "$extended" ]; }; then
        say "$text [$state $settings hold=$hold]"
        reported=$key
    fi
    sleep "$tick"
done
