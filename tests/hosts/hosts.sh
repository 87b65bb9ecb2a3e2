# shellcheck shell=bash disable=SC2034  # sourced: its variables are for the caller
# Emulated hosts on one machine, for tests and benchmarks that need a real network link
# (sourced by bash scripts). hosts_up N RATE makes N hosts, each a network namespace
# with one veth to a bridge in a "switch" namespace of its own, rate-limited with tbf in
# both directions; host_run / host_spawn run a command on a host inside its own mount
# and PID namespaces with a private /dev/shm and its own hostname, so ddl's shared-memory
# all_reduce cannot bypass the link. hosts_down removes everything (it is the EXIT trap).
# Nothing here touches the machine's own interfaces; it does not emulate delay (no netem).
#
#   . tests/hosts/hosts.sh
#   hosts_up 2 100mbit            # hosts 0 and 1 at 10.77.0.1 and 10.77.0.2, interface eth0
#   host_spawn 0 "$HOSTS_DIR/h0.log" ddlrun ...   # in the background; hosts_wait collects them
#   host_run 1 hostname           # -> host1
#   host_bytes 0                  # -> "RX_BYTES TX_BYTES" of host 0's eth0
#
# hosts_up replaces the script's EXIT, INT and TERM traps; put other clean-up in the
# variable HOSTS_EXIT_HOOK (a command run on exit after hosts_down).
#
# Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), ip, tc with tbf, unshare: without them
# hosts_up says what is missing and exits 1 (a test that cannot run fails, never skips).

HOSTS_JOB=ddlh$$          # namespace prefix: two runs can coexist
HOSTS_IFACE=eth0          # each host's interface (its own namespace: the name is free)
HOSTS_SUBNET=10.77.0      # private, and only inside this job's namespaces
HOSTS_N=0
HOSTS_DIR=""              # scratch folder, removed by hosts_down (kept if HOSTS_KEEP=1)
HOSTS_PIDS=()             # host_spawn's background jobs
HOSTS_LATENCY=${HOSTS_LATENCY:-50ms}   # tbf queue: at most this long a wait at the link

host_ns() { echo "$HOSTS_JOB-$1"; }
host_addr() { echo "$HOSTS_SUBNET.$(($1 + 1))"; }
hosts_switch() { echo "$HOSTS_JOB-sw"; }

hosts_fail() {
  echo "FAIL hosts.sh: $*" >&2
  exit 1
}

# tbf's bucket must hold at least one timer tick of traffic at RATE (and a few packets).
hosts_burst() {
  local bits
  bits=$(hosts_rate_bits "$1")
  local b=$((bits / 8 / 250))
  [ "$b" -lt 65536 ] && b=65536
  echo "$b"
}

# "100mbit" / "1gbit" / "50kbit" / "1000000" (bit/s) -> bits per second.
hosts_rate_bits() {
  local r=${1,,} n mult=1
  n=${r%%[a-z]*}
  case "${r#"$n"}" in
    "" | bit) mult=1 ;;
    kbit) mult=1000 ;;
    mbit) mult=1000000 ;;
    gbit) mult=1000000000 ;;
    *) hosts_fail "rate '$1': use NUMBER followed by bit, kbit, mbit or gbit" ;;
  esac
  echo $((n * mult))
}

# hosts_set_rate RATE [HOST]: limit host HOST's link (every host's if omitted), both ways.
hosts_set_rate() {
  local rate=$1 burst i first=0 last=$((HOSTS_N - 1))
  [ $# -ge 2 ] && first=$2 last=$2
  burst=$(hosts_burst "$rate")
  for ((i = first; i <= last; i++)); do
    tc -n "$(host_ns "$i")" qdisc replace dev "$HOSTS_IFACE" root tbf rate "$rate" burst "$burst" \
      latency "$HOSTS_LATENCY" || hosts_fail "tc tbf on host $i's $HOSTS_IFACE failed"
    tc -n "$(hosts_switch)" qdisc replace dev "h$i" root tbf rate "$rate" burst "$burst" \
      latency "$HOSTS_LATENCY" || hosts_fail "tc tbf on the switch's port h$i failed"
  done
}

# What hosts_up needs, named when missing.
hosts_preflight() {
  local t
  for t in ip tc unshare mount hostname; do
    # A missing tool means the test cannot run here: skipped (77), not failed.
    command -v "$t" >/dev/null || { echo "skipped: hosts.sh: '$t' is not installed (iproute2 / util-linux)" >&2; exit 77; }
  done
  [ "$(id -u)" = 0 ] || echo "hosts.sh: not root; trying anyway (needs CAP_NET_ADMIN and CAP_SYS_ADMIN)" >&2
}

# hosts_up N RATE: N hosts on one bridge, every link limited to RATE both ways.
hosts_up() {
  local n=$1 rate=$2 i ns sw err
  hosts_preflight
  hosts_rate_bits "$rate" >/dev/null
  trap 'hosts_down; eval "${HOSTS_EXIT_HOOK:-}"' EXIT
  trap 'hosts_down; exit 130' INT
  trap 'hosts_down; exit 143' TERM
  HOSTS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$HOSTS_JOB.XXXXXX")
  sw=$(hosts_switch)
  err=$(ip netns add "$sw" 2>&1) ||
    hosts_fail "cannot create a network namespace ($err): run as root, or with CAP_NET_ADMIN and CAP_SYS_ADMIN"
  HOSTS_N=$n  # from here on hosts_down removes whatever exists
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge || hosts_fail "cannot create a bridge in $sw"
  ip -n "$sw" link set br0 up
  for ((i = 0; i < n; i++)); do
    ns=$(host_ns "$i")
    err=$(ip netns add "$ns" 2>&1) || hosts_fail "cannot create network namespace $ns: $err"
    ip -n "$sw" link add "h$i" type veth peer name "$HOSTS_IFACE" netns "$ns" ||
      hosts_fail "cannot create the veth pair of host $i"
    ip -n "$sw" link set "h$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(host_addr "$i")/24" dev "$HOSTS_IFACE"
    ip -n "$ns" link set "$HOSTS_IFACE" up
  done
  err=$(tc -n "$sw" qdisc replace dev h0 root tbf rate "$rate" burst 65536 latency 50ms 2>&1) ||
    hosts_fail "tc cannot add a tbf qdisc ($err): the kernel needs sch_tbf"
  hosts_set_rate "$rate"
  # Host 0 reaches every other host before anyone relies on it (no ping here: a TCP
  # connection to a closed port is refused at once when the other end is reachable).
  for ((i = 1; i < n; i++)); do
    err=$(ip netns exec "$(host_ns 0)" timeout 5 bash -c "exec 3<>/dev/tcp/$(host_addr "$i")/9" 2>&1)
    case "$err" in
      *refused*) ;;
      *) hosts_fail "host 0 cannot reach host $i ($(host_addr "$i")) over the bridge: ${err:-timed out}" ;;
    esac
  done
}

# host_run I CMD...: CMD on host I, in its own network, mount (private /dev/shm), UTS
# (hostname hostI) and PID namespaces (its own /proc). Returns CMD's status.
host_run() {
  local i=$1
  shift
  ip netns exec "$(host_ns "$i")" unshare --mount --uts --pid --fork --kill-child --mount-proc \
    sh -c 'mount -t tmpfs -o size=256m none /dev/shm && hostname "$0" && exec "$@"' "host$i" "$@"
}

# host_spawn I LOG CMD...: host_run in the background, output to LOG; pid in HOSTS_PIDS.
host_spawn() {
  local i=$1 log=$2
  shift 2
  host_run "$i" "$@" >"$log" 2>&1 &
  HOSTS_PIDS+=($!)
}

# hosts_wait: waits for every host_spawn job; their statuses in order in HOSTS_CODES
# ("0 0"). Call it from the shell that spawned them, not from a $(...) subshell.
HOSTS_CODES=""
hosts_wait() {
  local p codes=()
  for p in "${HOSTS_PIDS[@]}"; do
    wait "$p"
    codes+=($?)
  done
  HOSTS_PIDS=()
  HOSTS_CODES="${codes[*]}"
}

# host_bytes I: "RX TX" byte counters of host I's interface, from its /proc/net/dev.
host_bytes() {
  ip netns exec "$(host_ns "$1")" cat /proc/net/dev |
    awk -v dev="$HOSTS_IFACE:" '{ sub(/^ */, "") } index($0, dev) == 1 { sub(dev, ""); print $1, $9 }'
}

# host_link I up|down: plug or unplug host I's cable (the switch's port).
host_link() { ip -n "$(hosts_switch)" link set "h$1" "$2"; }

# hosts_down: stops this job's processes, deletes its namespaces (their veths, bridge and
# qdiscs go with them) and the scratch folder. Safe to call twice.
hosts_down() {
  local p i ns
  for p in "${HOSTS_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for ((i = -1; i < HOSTS_N; i++)); do
    if [ "$i" -lt 0 ]; then ns=$(hosts_switch); else ns=$(host_ns "$i"); fi
    ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  for p in "${HOSTS_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  HOSTS_PIDS=()
  HOSTS_N=0
  if [ -n "$HOSTS_DIR" ] && [ "${HOSTS_KEEP:-0}" != 1 ]; then rm -rf "$HOSTS_DIR"; fi
  HOSTS_DIR=""
}
