#!/bin/bash
# t0504-testbed-job-map.t - exa hpc job-map inside a real Slurm job on the
# testbed: the GPU indices Slurm hands the job (SLURM_JOB_GPUS, as in a
# Prolog's environment) become one mapping file each holding the job's
# SLURM_JOB_ID, and the epilog removes them.
set -u
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
. "$(dirname "$0")/lib-observe.sh"
export SLURM_CONF=$(tb_conf testa)
D="$EXA_T/job"
mkdir -p "$D"
cat >"$D/job.sh" <<SH
#!/bin/sh
printf '%s\n' "\${SLURM_JOB_GPUS:-}" >"$D/gpus"
"$EXA" -q hpc job-map prolog --dir "$D/map"
(cd "$D/map" && for f in *; do printf '%s=%s;' "\$f" "\$(cat "\$f" | tr '\n' ' ')"; done) >"$D/after-prolog"
"$EXA" -q hpc job-map epilog --dir "$D/map"
ls -A "$D/map" >"$D/after-epilog"
touch "$D/done"
SH
chmod +x "$D/job.sh"
jid=$(sbatch --parsable -A "${TESTBED_ACCOUNT:-research}" -p "${TESTBED_PARTITION:-debug}" \
      --gpus=2 -J exa-t0504 -o "$D/out" "$D/job.sh")
check "sbatch a 2-GPU job ($jid)" test -n "$jid"
_obs_cleanup_hooks+=("scancel $jid 2>/dev/null")
for _ in $(seq 360); do [ -e "$D/done" ] && break; sleep 0.5; done
check "the job ran" test -e "$D/done"
gpus=$(cat "$D/gpus" 2>/dev/null)
want=
IFS=, read -ra idx <<<"$gpus"
for g in "${idx[@]}"; do want="$want$g=$jid ;"; done
check "Slurm gave the job GPU indices ($gpus)" test "${#idx[@]}" -eq 2
is "prolog: one file per GPU index, holding SLURM_JOB_ID" "$(cat "$D/after-prolog" 2>/dev/null)" "$want"
is "epilog: nothing left" "$(cat "$D/after-epilog" 2>/dev/null)" ""
done_testing
