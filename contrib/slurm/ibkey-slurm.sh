# shellcheck shell=bash
# Shared by ibkey's Slurm scripts (prolog.sh, taskprolog.sh, epilog.sh,
# prolog_slurmctld.sh): the configuration and the job's partition. Sourced, not run.

# Slurm runs prologs and epilogs without a search path (prolog_epilog.html: "these
# programs do not have a search path set").
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# ibkey_load_config reads the site's settings: $IBKEY_SLURM_CONF, else
# /etc/ibkey/slurm.conf (see ibkey-slurm.conf for every setting), over these defaults.
ibkey_load_config() {
	IBKEY=/usr/local/bin/ibkey
	IBKEY_ARGS=()
	IBKEY_PKEY=
	IBKEY_WAIT=60s
	IBKEY_LIBS=
	IBKEY_LIB_VERSIONS=
	IBKEY_SOURCE=local
	IBKEY_STATE_DIR=/run/ibkey
	IBKEY_ON_TIMEOUT=fail-tasks
	IBKEY_STRICT=0
	local conf=${IBKEY_SLURM_CONF:-/etc/ibkey/slurm.conf}
	if [ -r "$conf" ]; then
		# shellcheck source=/dev/null
		. "$conf"
	fi
}

# ibkey_job_pkey prints the job's partition: a "pkey=0xNNNN" word in the job's
# --extra (SLURM_JOB_EXTRA, Slurm 23.02 on) or --comment (SLURM_JOB_COMMENT), else
# IBKEY_PKEY. It fails when the job asks for none: the job is not gated. Slurm
# gives them to the Prolog, Epilog and PrologSlurmctld (the TaskProlog neither);
# Slurm 22.05 has no --extra (`sbatch --extra=pkey=0x0042` is taken there as an
# abbreviation of --extra-node-info and refused).
ibkey_job_pkey() (
	# A subshell: set -f (the words are not file patterns: "pkey=*" in a comment
	# must not become the name of a file in the working directory) stays in it.
	set -f
	for w in ${SLURM_JOB_EXTRA:-} ${SLURM_JOB_COMMENT:-}; do
		case $w in
		pkey=*)
			printf '%s\n' "${w#pkey=}"
			exit 0
			;;
		esac
	done
	[ -n "$IBKEY_PKEY" ] || exit 1
	printf '%s\n' "$IBKEY_PKEY"
)

# ibkey_state is the per-job file prefix the Prolog writes and the TaskProlog reads.
ibkey_state() {
	printf '%s/job-%s\n' "$IBKEY_STATE_DIR" "$SLURM_JOB_ID"
}

# ibkey_lib_args are the --lib and --lib-version flags for IBKEY_LIBS and
# IBKEY_LIB_VERSIONS.
ibkey_lib_args() {
	if [ -n "$IBKEY_LIBS" ]; then
		printf '%s\n' --lib "$IBKEY_LIBS"
	fi
	if [ -n "$IBKEY_LIB_VERSIONS" ]; then
		printf '%s\n' --lib-version "$IBKEY_LIB_VERSIONS"
	fi
}
