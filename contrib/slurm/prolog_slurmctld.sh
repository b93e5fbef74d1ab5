#!/bin/bash
# Slurm PrologSlurmctld example (slurm.conf: PrologSlurmctld=/etc/slurm/ibkey/
# prolog_slurmctld.sh). Runs once per job on the controller, at allocation: waits
# until every node of the job (SLURM_JOB_NODELIST, a Slurm hostlist) holds the job's
# partition, checked over MADs from the controller (it needs umad access: root, or
# the rdma group for SlurmctldUser). A failure requeues a batch job, which is tried
# again after AuthInfo's cred_expire (120 s by default) at the next scheduling pass,
# and cancels an interactive one (prolog_epilog.html); the settings themselves are
# the TaskProlog's. Slurm 22.05 runs a PrologSlurmctld added to slurm.conf only
# after slurmctld restarts (`scontrol reconfigure` is not enough: prep_script.c
# decides at start), and discards what it prints (slurmscriptd.c, _run_script):
# slurmctld's log says only "PrologSlurmctld exit status 1:0".
set -u
here=$(dirname "$0")
# shellcheck source=ibkey-slurm.sh
. "$here/ibkey-slurm.sh"
ibkey_load_config

key=$(ibkey_job_pkey) || exit 0 # the job asks for no partition
mapfile -t libs < <(ibkey_lib_args)
"$IBKEY" ${IBKEY_ARGS[@]+"${IBKEY_ARGS[@]}"} job --node "$SLURM_JOB_NODELIST" ${libs[@]+"${libs[@]}"} \
	--want "$key" --wait "$IBKEY_WAIT" >/dev/null
rc=$?
case $rc in
0) exit 0 ;;
1) exit 1 ;; # not ready (named on stderr, which slurmctld discards): requeue
*)
	# slurmctld discards this (see above): with IBKEY_STRICT=0 the job starts and
	# nothing says why; the Prolog/TaskProlog pair says it in the job's output.
	echo "ibkey: job $SLURM_JOB_ID: could not check partition $key (ibkey exited $rc)" >&2
	[ "$IBKEY_STRICT" = 1 ] && exit 1
	exit 0
	;;
esac
