#!/usr/bin/env bash
# The labs end to end (docs/labs/README.md): ddl-grade gives each lab's reference plugin
# full marks, public and hidden cases alike, and the generated skeleton zero with the
# message its handout names; deliberately wrong strategies (faulty_strategies.cpp) fail
# exactly the check that catches their mistake, a deadlock within the timeout and a
# crash naming the ranks; (lab ddp-buckets) buckets all-reduced after backward fail overlap,
# a different cap fails buckets; lab fault's kills and restarts; make_skeleton.py refuses
# broken markers. Env: GRADE (ddl-grade), LABS (build/labs), FAULTY and FAULTY_CHECKPOINT
# (the faulty plugins), MAKE_SKELETON.
set -euo pipefail
GRADE=${GRADE:?GRADE: the ddl-grade program}
LABS=${LABS:?LABS: the folder of the lab plugins}
FAULTY=${FAULTY:?FAULTY: the faulty strategies plugin}
FAULTY_CHECKPOINT=${FAULTY_CHECKPOINT:?FAULTY_CHECKPOINT: the faulty checkpointing plugin}
MAKE_SKELETON=${MAKE_SKELETON:?MAKE_SKELETON: labs/make_skeleton.py}
tmp=$(mktemp -d /tmp/ddl-labs-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export DDL_TIMEOUT=60
name=labs
. "$(dirname "$0")/lib.sh"

echo "== references: full marks on 2 and 3 ranks, and on a hidden case with odd sizes"
printf '# instructor cases\nranks=3 in=7 hidden=13 out=5 batch=3 steps=2 seed=4\n' > "$tmp/hidden.txt"
grade gs --lab p2p-gather-scatter --plugin "$LABS/liblab_p2p_reference.so" --json "$tmp/gs.json"
expect gs 0 "score 10/10"
grade ar --lab p2p-allreduce --plugin "$LABS/liblab_p2p_reference.so"
expect ar 0 "score 10/10"
grade ar_hidden --lab p2p-allreduce --plugin "$LABS/liblab_p2p_reference.so" --hidden "$tmp/hidden.txt" --json "$tmp/ar.json"
expect ar_hidden 0 "score 15/15"
grade ring --lab ring --plugin "$LABS/liblab_ring_reference.so" --hidden "$tmp/hidden.txt" --json "$tmp/ring.json"
expect ring 0 "score 15/15"
shm_before=$(ls /dev/shm | grep '^ddl-oslab-' | sort || true)
grade shm --lab shm-allreduce --plugin "$LABS/liblab_os_reference.so" --hidden "$tmp/hidden.txt"
expect shm 0 "score 12/12"
shm_after=$(ls /dev/shm | grep '^ddl-oslab-' | sort || true)
[ -z "$(comm -13 <(echo "$shm_before") <(echo "$shm_after"))" ] || fail "lab os's reference left a segment in /dev/shm"
# Ranks SIGKILLed mid-run (no destructor runs) leave no segment either: rank 0 unlinks it
# as soon as every rank has mapped it.
printf 'ranks=2 in=256 hidden=512 out=10 batch=8 steps=5000 seed=4\n' > "$tmp/long.txt"
shm_workers="$GRADE --worker --strategy student-shm --case ranks=2 in=256 hidden=512"
"$GRADE" --lab shm-allreduce --plugin "$LABS/liblab_os_reference.so" --hidden "$tmp/long.txt" > "$tmp/shm_kill.txt" 2>&1 &
grade_pid=$!
mapped=0
for _ in $(seq 300); do
  mapped=0
  for p in $(pgrep -f -- "$shm_workers" || true); do grep -q ddl-oslab- "/proc/$p/maps" 2> /dev/null && mapped=$((mapped + 1)); done
  [ "$mapped" = 2 ] && break
  sleep 0.1
done
sleep 1  # past the constructor's last barrier
pkill -KILL -f -- "$shm_workers" || true
wait "$grade_pid" || true
[ "$mapped" = 2 ] || { cat "$tmp/shm_kill.txt"; fail "lab os's long case never had both ranks map the segment"; }
shm_after=$(ls /dev/shm | grep '^ddl-oslab-' | sort || true)
[ -z "$(comm -13 <(echo "$shm_before") <(echo "$shm_after"))" ] || fail "lab os's reference, its ranks SIGKILLed, left a segment in /dev/shm"
grade ps --lab param-server --plugin "$LABS/liblab_ps_reference.so" --hidden "$tmp/hidden.txt"
expect ps 0 "score 15/15"
printf 'ranks=2 in=5 hidden=9 out=4 seed=3 cap=200\nranks=4 in=7 hidden=13 out=5 batch=1 steps=2 seed=5\n' > "$tmp/ddp_hidden.txt"
grade ddp --lab ddp-buckets --plugin "$LABS/liblab_ddp_reference.so" --hidden "$tmp/ddp_hidden.txt"
expect ddp 0 "score 24/24"
expect ddp 0 "every step all-reduced the 4 buckets of 5, 65, 13, 91 floats ([b2] [W2] [b1] [W1])"
expect ddp 0 "in every step an all_reduce started while backward still ran"
expect ddp 0 "nothing to grade: with a cap of 200 bytes, the 2 buckets of 49, 45 floats ([b2 W2 b1] [W1]) leave"
# Lab fault: per rank count a rank killed between checkpoints (4 checks) and one cut while
# writing a checkpoint (5 checks); the hidden case kills rank 4 % 3 = 1 mid-write.
grade fault --lab fault --plugin "$LABS/liblab_fault_reference.so" --hidden "$tmp/hidden.txt" --json "$tmp/fault.json"
expect fault 0 "score 27/27"
expect fault 0 "rank 1 dies while writing its checkpoint of step 4 (checkpoints every 2 steps)"
expect fault 0 "PASS 1/1  case 3 (3 ranks, 103 floats (in 6, hidden 10, out 3), batch 2 per rank, 6 steps): after the restart every rank resumes from step 4"
set +e
"$GRADE" --worker --strategy student-checkpoint --case "ranks=2 in=6 hidden=10 out=3 batch=2 steps=3 seed=1" \
  --dir "$tmp" --fault "every=2x rank=1" > "$tmp/bad_fault.txt" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && grep -qF -- "--fault: field 'every' wants an integer, not '2x'" "$tmp/bad_fault.txt" \
  || { cat "$tmp/bad_fault.txt"; fail "a malformed --fault field is not named (exit status $rc)"; }
sleep 1
! pgrep -f -- "$GRADE --worker --strategy student-checkpoint" > /dev/null || fail "ranks of lab fault's runs are still running"
python3 - "$tmp/gs.json" "$tmp/ar.json" "$tmp/ring.json" "$tmp/fault.json" << 'PY' || fail "results.json is not Gradescope's format"
import json, sys
for path, n_hidden in zip(sys.argv[1:], (0, 5, 5, 9)):
    r = json.load(open(path))
    tests = r["tests"]
    assert r["score"] == sum(t["score"] for t in tests) == sum(t["max_score"] for t in tests), path
    assert all(set(t) == {"name", "score", "max_score", "output", "visibility"} for t in tests), path
    assert sum(t["visibility"] == "after_published" for t in tests) == n_hidden, path
PY

echo "== generated skeletons: zero, naming the function to write"
grade sk_gs --lab p2p-gather-scatter --plugin "$LABS/liblab_p2p_skeleton.so" --ranks 2
expect sk_gs 1 "rank 0 failed: gather_scatter_sum: not implemented"
expect sk_gs 1 "score 0/5"
grade sk_ar --lab p2p-allreduce --plugin "$LABS/liblab_p2p_skeleton.so" --ranks 2
expect sk_ar 1 "all_to_all_sum: not implemented"
grade sk_ring --lab ring --plugin "$LABS/liblab_ring_skeleton.so" --ranks 2
expect sk_ring 1 "ring_chunks: not implemented"
grade sk_fault --lab fault --plugin "$LABS/liblab_fault_skeleton.so" --ranks 2
expect sk_fault 1 "rank 0 failed: agree_on_step: not implemented"
expect sk_fault 1 "score 0/9"
grade sk_ddp --lab ddp-buckets --plugin "$LABS/liblab_ddp_skeleton.so" --ranks 2
expect sk_ddp 1 "rank 0 failed: assign_buckets: not implemented"
expect sk_ddp 1 "score 0/6"
grade sk_ps --lab param-server --plugin "$LABS/liblab_ps_skeleton.so" --ranks 2
expect sk_ps 1 "rank 0 failed: push_gradients: not implemented"
expect sk_ps 1 "score 0/5"
grade sk_shm --lab shm-allreduce --plugin "$LABS/liblab_os_skeleton.so" --ranks 2
expect sk_shm 1 "rank 0 failed: open_segment: not implemented"
expect sk_shm 1 "score 0/4"

echo "== each mistake fails its check"
start=$(date +%s)
grade hang --lab p2p-allreduce --plugin "$FAULTY" --strategy faulty-hang --ranks 2 --timeout 4
expect hang 1 "ranks 0, 1 had not finished"
[ $(($(date +%s) - start)) -lt 30 ] || fail "a deadlocked run was not killed at its timeout"
sleep 1
! pgrep -f -- "$GRADE --worker --strategy faulty-hang" > /dev/null || fail "ranks of the killed run are still running"
grade crash --lab p2p-allreduce --plugin "$FAULTY" --strategy faulty-crash --ranks 2
expect crash 1 "ended without a result (a crash?)"
expect crash 1 "rank 1 (local rank 1, pid"
expect crash 1 "was killed by signal 6 (SIGABRT)"
grade noavg --lab p2p-allreduce --plugin "$FAULTY" --strategy faulty-no-average --ranks 2
expect noavg 1 "divided by N"
expect noavg 1 "PASS 1/1  case 1 (2 ranks, 103 floats (in 6, hidden 10, out 3), batch 2 per rank, 3 steps): bytes"
grade coll --lab p2p-allreduce --plugin "$FAULTY" --strategy faulty-collective --ranks 2
expect coll 1 "called collectives (all_reduce: 3 calls)"
grade order --lab p2p-allreduce --plugin "$FAULTY" --strategy faulty-own-order --ranks 3
expect order 1 "differ at weight"
expect order 1 "score 4/5"
grade gsbytes --lab p2p-gather-scatter --plugin "$LABS/liblab_p2p_reference.so" --strategy student-allreduce --ranks 3
expect gsbytes 1 "rank 1 sent 824 bytes per step, the lab's formula gives 412 bytes"
grade ringbytes --lab ring --plugin "$LABS/liblab_p2p_reference.so" --strategy student-gather-scatter --ranks 3
expect ringbytes 1 "rank 0 sent 824 bytes per step, the lab's formula gives 544 to 560 bytes"
# Lab fault: each rank resuming from its own newest checkpoint disagrees after a cut write
# (the grader stops such ranks, so the case's training checks are not run); all loading
# rank 0's newest agree on a step rank 1 never finished; a resume that restores the step
# but not the weights fails the equality check in both cases; writing straight to the final name leaves a torn file there even with a reader that skips it.
grade noagree --lab fault --plugin "$FAULTY_CHECKPOINT" --strategy faulty-no-agreement --ranks 2
expect noagree 1 "the ranks resumed from different steps (rank 0 from step 4, rank 1 from step 2): they must agree"
expect noagree 1 "PASS 1/1  case 1 (2 ranks, 103 floats (in 6, hidden 10, out 3), batch 2 per rank, 6 steps): after the restart"
expect noagree 1 "PASS 1/1  case 2 (2 ranks, 103 floats (in 6, hidden 10, out 3), batch 2 per rank, 6 steps): checkpoints are written atomically"
expect noagree 1 "score 5/9"
grade rank0 --lab fault --plugin "$FAULTY_CHECKPOINT" --strategy faulty-rank0-newest --ranks 2
expect rank0 1 "every rank resumed from step 4, but rank 1 held no complete checkpoint of it"
expect rank0 1 "score 8/9"
grade lost --lab fault --plugin "$FAULTY_CHECKPOINT" --strategy faulty-lost-weights --ranks 2
expect lost 1 "Or, after the restart, was a rank's state not the agreed step's?"
expect lost 1 "score 7/9"
grade torn --lab fault --plugin "$FAULTY_CHECKPOINT" --strategy faulty-torn-write --ranks 2
expect torn 1 "rank 1 held rank1-step4.ckpt (206 bytes) although it died while writing it"
expect torn 1 "score 8/9"

grade ddplate --lab ddp-buckets --plugin "$FAULTY" --strategy faulty-ddp-late --ranks 3
expect ddplate 1 "rank 0, step 0: no all_reduce started before backward produced its last gradient (b1's)"
expect ddplate 1 "score 5/6"
grade ddpcap --lab ddp-buckets --plugin "$LABS/liblab_ddp_reference.so" --strategy student-ddp:1000 --ranks 2
expect ddpcap 1 "1 all_reduce call of 103 floats; a cap of 160 bytes gives the handout's 3 buckets of 33, 10, 60 floats"
expect ddpcap 1 "score 4/6"
# The built-in param-server pushes with gather and pulls with a binomial-tree broadcast:
# collectives, and from 4 ranks on rank 0 sends 2 copies of the weights, not N-1 = 3.
grade psbuiltin --lab param-server --plugin "$LABS/liblab_ps_reference.so" --strategy param-server --ranks 4
expect psbuiltin 1 "rank 0 called collectives (broadcast: 3 calls, gather: 3 calls)"
expect psbuiltin 1 "rank 0 sent 824 bytes per step, the lab's formula gives 1236 bytes"
grade psbytes --lab param-server --plugin "$LABS/liblab_p2p_reference.so" --strategy student-allreduce --ranks 3
expect psbytes 1 "rank 1 sent 824 bytes per step, the lab's formula gives 412 bytes"
grade shmorder --lab shm-allreduce --plugin "$FAULTY" --strategy faulty-shm-own-order --ranks 3
expect shmorder 1 "ranks 0 and 1 differ at weight"
expect shmorder 1 "score 3/4"
grade shmbytes --lab shm-allreduce --plugin "$LABS/liblab_p2p_reference.so" --strategy student-allreduce --ranks 2
expect shmbytes 1 "rank 0 sent 412 bytes per step, the lab's formula gives 0 bytes"
expect shmbytes 1 "score 3/4"

echo "== make_skeleton.py: regions replaced, markers checked"
grep -q 'throw std::logic_error("ring_sum: not implemented");' "$LABS/ring_skeleton.cpp" ||
  fail "ring_skeleton.cpp lacks ring_sum's throw"
grep -q 'throw std::logic_error("server_step: not implemented");' "$LABS/ps_skeleton.cpp" ||
  fail "ps_skeleton.cpp lacks server_step's throw"
! grep -qE 'SOLUTION|flat.add_\(from\[peer\]\)|== 0\) opt.step' "$LABS/ps_skeleton.cpp" || fail "ps_skeleton.cpp holds a line of the solution"
! grep -qE 'SOLUTION|in.add_\(incoming\)|kScatterTag\);$|ReduceOp::Min|O_TRUNC|memcpy\(t.raw_data|all_reduce_async\(b.flat|shm_open\(|setpshared\(&' \
  "$LABS/ring_skeleton.cpp" "$LABS/p2p_skeleton.cpp" "$LABS/fault_skeleton.cpp" "$LABS/ddp_skeleton.cpp" \
  "$LABS/os_skeleton.cpp" ||
  fail "a skeleton still holds a marker or a line of the solution"
printf 'void f() {\n  // BEGIN SOLUTION f\n  g();\n}\n' > "$tmp/open.cpp"
! "$MAKE_SKELETON" "$tmp/open.cpp" "$tmp/out.cpp" 2> "$tmp/open.err" && grep -q "open.cpp:2: BEGIN SOLUTION never ended" \
  "$tmp/open.err" || fail "make_skeleton.py accepted a region that never ends"
printf 'void f() {\n  // BEGIN SOLUTION\n}\n' > "$tmp/noname.cpp"
! "$MAKE_SKELETON" "$tmp/noname.cpp" "$tmp/out.cpp" 2> /dev/null || fail "make_skeleton.py accepted a nameless region"

echo "== usage errors"
grade wrongname --lab ring --plugin "$LABS/liblab_p2p_reference.so" --json "$tmp/wrong.json"
expect wrongname 1 "unknown sync strategy 'student-ring'"
grep -q '"score": 0.0' "$tmp/wrong.json" || fail "no results.json for a plugin without the lab's strategy"
grade nolab --lab nosuch --plugin "$FAULTY"
expect nolab 2 "p2p-gather-scatter, p2p-allreduce, ring, fault, ddp-buckets"
expect nolab 2 "param-server, shm-allreduce"
echo "labs: ok"
