#!/usr/bin/env bash
# SLURM for real, on one node: installs Debian's slurm-wlm and munge when missing, starts a
# private one-node cluster (munged, slurmctld, slurmd with their own sockets, ports and state
# under a scratch folder; /etc is not touched), and runs scripts/slurm_train.sbatch as a user
# would, on CPU with Gloo, chosen through the environment:
#   1. sbatch --ntasks-per-node=2, then `scancel --signal=TERM`: a checkpoint, the job COMPLETED;
#   2. resubmitted with --resume: continues from it;
#   3. `srun -n 2` alone (no --ntasks-per-node, MASTER_ADDR or MASTER_PORT) with --resume auto;
#   4. kill -9 of one task: the job ends by itself, the other rank names the lost one.
# The daemons are stopped by their PIDs at the end, also on failure. Needs root.
#   tests/slurm/run.sh [BUILD_DIR]      (default: build/; takes a few minutes)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)"
tts="$build/tts-train"
[ -x "$tts" ] || { echo "slurm test: no $tts; build first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "slurm test: needs root (slurmd runs the job steps)" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm test: installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge \
    >/dev/null
fi

work="$(mktemp -d /tmp/tts-slurm.XXXXXX)"
daemons=()
jobs_submitted=()
cleanup() {
  local status=$?
  for job in ${jobs_submitted[@]+"${jobs_submitted[@]}"}; do scancel "$job" 2>/dev/null || true; done
  # scancel returns at once: let the jobs' steps end before their slurmd goes (a batch step left
  # behind outlives the test).
  for job in ${jobs_submitted[@]+"${jobs_submitted[@]}"}; do
    for _ in $(seq 50); do
      case "$(scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*')" in
        *PENDING | *CONFIGURING | *RUNNING | *COMPLETING | *SUSPENDED) sleep 0.2 ;;
        *) break ;;
      esac
    done
  done
  # Reverse order: slurmd, slurmctld, munged.
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    kill "${daemons[i]}" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "${daemons[i]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${daemons[i]}" 2>/dev/null || true
  done
  if [ "$status" = 0 ]; then
    rm -rf "$work"
  else
    echo "slurm test: FAILED; logs kept in $work" >&2
  fi
}
trap cleanup EXIT
fail() {
  echo "slurm test: FAILED: $*" >&2
  exit 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- a one-node cluster of our own -------------------------------------------------------------
mkdir -p "$work/munge" "$work/state" "$work/spool"
chmod 700 "$work/munge"
munged --force --socket="$work/munge/munge.socket" --key-file=/etc/munge/munge.key \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed" --foreground >"$work/munged.out" 2>&1 &
daemons+=($!)
host="$(hostname)"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=tts
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
KillWait=15
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
for _ in $(seq 50); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
daemons+=($!)
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -x idle >/dev/null && break
  sleep 0.3
done
sinfo -h -o %T | grep -x idle >/dev/null || fail "the node did not become idle: $(sinfo 2>&1)"

# --- a corpus and its features ------------------------------------------------------------------
MAX_CHARS=60 "$root/scripts/make_corpus.sh" "$work/corpus" 16 >/dev/null
"$tts" preprocess --config "$root/configs/tiny.yaml" --input "$work/corpus" \
  --output "$work/feats" --workers 2 >/dev/null 2>&1

export CONFIG="$root/configs/tiny.yaml" FEATURES="$work/feats" RUN="$work/run" BACKEND=gloo \
  BUILD_DIR="$build"
# The script asks for 2 nodes of 8 GPUs: a user of a CPU node overrides that on sbatch's line.
cpu_job=(--nodes=1 --cpus-per-task=1 --gpus-per-node=0 --time=30)
train_options=(--set train.checkpoint_interval=2 --set train.val_interval=100000
  --set distributed.timeout_s=10)

job_state() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
job_exit() { scontrol show job "$1" | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2; }
wait_job() { # job limit_s
  local start=$SECONDS
  while :; do
    case "$(job_state "$1")" in PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED) ;; *) return 0 ;; esac
    [ $((SECONDS - start)) -lt "$2" ] || fail "job $1 still $(job_state "$1") after $2 s"
    sleep 0.5
  done
}
wait_file() { # path limit_s job
  local start=$SECONDS
  while [ ! -e "$1" ]; do
    [ $((SECONDS - start)) -lt "$2" ] || fail "no $1 after $2 s; job output: $(cat "$work"/*.out)"
    # CONFIGURING: allocated, its node still being set up (seen for a moment on a loaded machine).
    case "$(job_state "$3")" in PENDING | CONFIGURING | RUNNING) ;;
      *) fail "job $3 is $(job_state "$3") before $1 appeared: $(cat "$work"/*.out)" ;;
    esac
    sleep 0.3
  done
}
submit() { # output name, sbatch options..., -- train options...
  local out="$work/$1.out"
  shift
  local job
  job="$(cd "$root" && sbatch --parsable --output="$out" "$@")"
  jobs_submitted+=("$job")
  echo "$job"
}

# 1. scancel --signal=TERM: every task finishes its step, rank 0 checkpoints, all exit 0.
job="$(submit term "${cpu_job[@]}" --ntasks-per-node=2 "$root/scripts/slurm_train.sbatch" \
  --max-steps 100000 "${train_options[@]}")"
wait_file "$RUN/checkpoints/step_00000002.pt" 300 "$job"
scancel --signal=TERM "$job"
wait_job "$job" 120
out="$(cat "$work/term.out")"
if [ "$(job_state "$job")" != COMPLETED ] || [ "$(job_exit "$job")" != 0:0 ]; then
  fail "job $job after scancel --signal=TERM: $(job_state "$job") $(job_exit "$job"): $out"
fi
grep -q "rank 0/2 (local 0/2)" <<<"$out" || fail "rank 0 did not see 2 tasks on its node: $out"
step="$(readlink "$RUN/checkpoints/latest" | sed 's/[^0-9]//g; s/^0*//')"
echo "slurm test: scancel --signal=TERM: job $job COMPLETED 0:0, checkpoint at step $step"

# 2. Resubmitted with --resume: continues from that checkpoint.
job="$(submit resume "${cpu_job[@]}" --ntasks-per-node=2 "$root/scripts/slurm_train.sbatch" \
  --resume --max-steps $((step + 2)) "${train_options[@]}")"
wait_job "$job" 300
out="$(cat "$work/resume.out")"
[ "$(job_state "$job")" = COMPLETED ] || fail "resumed job $job: $(job_state "$job"): $out"
grep -q "resumed from $RUN/checkpoints/step_0*$step.pt at step $step" <<<"$out" ||
  fail "job $job did not resume from step $step: $out"
echo "slurm test: --resume: job $job continued from step $step to $((step + 2))"
step=$((step + 2))

# 3. `srun -n 2` on one node, no --ntasks-per-node (so no SLURM_NTASKS_PER_NODE), no MASTER_ADDR
#    and no MASTER_PORT: the tasks still know they share the node and meet on loopback.
out="$(env -u MASTER_ADDR -u MASTER_PORT srun --nodes=1 -n 2 --cpus-per-task=1 --time=30 \
  --kill-on-bad-exit=1 "$tts" train --config "$CONFIG" --data "$FEATURES" --out "$RUN" \
  --backend gloo --resume auto --max-steps $((step + 1)) "${train_options[@]}" 2>&1)" ||
  fail "srun -n 2: $out"
grep -q "rank 0/2 (local 0/2)" <<<"$out" || fail "srun -n 2: rank 0 did not see 2 local tasks: $out"
grep -q "at step $step" <<<"$out" || fail "srun -n 2 --resume auto: did not resume: $out"
echo "slurm test: srun -n 2 without MASTER_ADDR/MASTER_PORT: trained to step $((step + 1))"
step=$((step + 1))

# 4. kill -9 of one task: the job ends by itself and the other rank names the lost one.
job="$(submit kill "${cpu_job[@]}" --ntasks-per-node=2 "$root/scripts/slurm_train.sbatch" \
  --resume --max-steps 100000 "${train_options[@]}")"
wait_file "$RUN/checkpoints/step_$(printf %08d $(((step / 2 + 2) * 2))).pt" 300 "$job"
victim=""
for pid in $(pgrep -x tts-train); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -x "SLURM_JOB_ID=$job" >/dev/null &&
    tr '\0' '\n' <"/proc/$pid/environ" | grep -x SLURM_PROCID=1 >/dev/null; then victim=$pid; fi
done
[ -n "$victim" ] || fail "no task with SLURM_PROCID=1 in job $job"
killed_at=$SECONDS
kill -9 "$victim"
wait_job "$job" 120
out="$(cat "$work/kill.out")"
[ "$(job_state "$job")" != COMPLETED ] || fail "job $job COMPLETED after a task was killed: $out"
grep -q "lost rank 1" "$RUN/logs/rank_0.log" 2>/dev/null ||
  grep -q "lost rank 1" <<<"$out" || fail "rank 0 did not name the lost rank 1: $out"
echo "slurm test: kill -9 of task 1: job $job $(job_state "$job") $((SECONDS - killed_at)) s later"
echo "slurm test: passed"
