#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/ibkey/prolog.sh; PrologFlags=Alloc
# runs it when the job is allocated rather than at its first step). Runs as root on
# each of the job's nodes: waits until this node's ports hold the job's partition
# (ibkey job --want --wait) and leaves the settings that put the job in it for the
# TaskProlog. Environment from slurmd (prep_script_slurmd.c, _build_env): no PATH;
# SLURM_JOB_ID, SLURMD_NODENAME, SLURM_JOB_COMMENT (when the job has a comment),
# SLURM_JOB_EXTRA (23.02 on), ... What it prints (stdout and stderr together) is in
# slurmd's log when it fails, and otherwise only at SlurmdDebug=debug2.
set -u
here=$(dirname "$0")
# shellcheck source=ibkey-slurm.sh
. "$here/ibkey-slurm.sh"
ibkey_load_config

state=$(ibkey_state)
rm -f "$state.env" "$state.fail" "$state.warn"
key=$(ibkey_job_pkey) || exit 0 # the job asks for no partition

mkdir -p "$IBKEY_STATE_DIR" && chmod 0755 "$IBKEY_STATE_DIR" || exit 1
select=()
if [ "$IBKEY_SOURCE" = fabric ]; then
	select=(--node "$SLURMD_NODENAME")
fi
mapfile -t libs < <(ibkey_lib_args)
# The job's Open MPI reads its user's ~/.openmpi/mca-params.conf (opal_home_directory:
# $HOME), and slurmd gives the Prolog no HOME: ibkey reads the file that user's
# processes will read. Unknown here: HOME stays unset, and ibkey names the file it
# could not locate.
home=$(getent passwd "${SLURM_JOB_USER:-}" | cut -d: -f6)
if [ -n "$home" ]; then
	export HOME=$home
fi
tmp=$(mktemp "$state.XXXXXX") || exit 1
"$IBKEY" ${IBKEY_ARGS[@]+"${IBKEY_ARGS[@]}"} job ${select[@]+"${select[@]}"} ${libs[@]+"${libs[@]}"} --want "$key" \
	--wait "$IBKEY_WAIT" --emit env >"$tmp" 2>"$tmp.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	chmod 0644 "$tmp" && mv "$tmp" "$state.env"
	# What ibkey warned about (a device it could not read that no library of the
	# job would use, an IPoIB interface missing) goes to slurmd's log (debug2).
	grep '^warning: ' "$tmp.err" >&2
	rm -f "$tmp.err"
	exit 0
fi
# The reason goes to slurmd's log (the Prolog's stderr: at error level when the
# Prolog fails, at debug2 when it succeeds) and to the TaskProlog.
{
	echo "ibkey job --want $key on $SLURMD_NODENAME exited $rc:"
	grep -v '^note: ' "$tmp.err"
} >"$tmp"
cat "$tmp" >&2
chmod 0644 "$tmp"
rm -f "$tmp.err"
if [ "$rc" -eq 1 ] || [ "$IBKEY_STRICT" = 1 ]; then
	if [ "$IBKEY_ON_TIMEOUT" = drain ]; then
		rm -f "$tmp"
		exit 1
	fi
	mv "$tmp" "$state.fail"
else
	mv "$tmp" "$state.warn"
fi
exit 0
