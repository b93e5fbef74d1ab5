#!/bin/bash
# Slurm TaskProlog (slurm.conf: TaskProlog=/etc/slurm/ibkey/taskprolog.sh). Runs as
# the job's user before each task (the batch script's too), in the job's
# environment (the user's PATH, no SLURM_JOB_COMMENT); what it prints as
# "export NAME=value" is set in the task's environment, "print ..." goes to the
# task's output, other lines nowhere (stderr is read with stdout: run_command.c,
# task.c _proc_stdout), and a non-zero exit fails the job before the
# task runs (slurmstepd adds "error: TaskProlog failed status=1" to the output; the
# node stays in service). It prints what the Prolog left for the job.
set -u
here=$(dirname "$0")
# shellcheck source=ibkey-slurm.sh
. "$here/ibkey-slurm.sh"
ibkey_load_config

state=$(ibkey_state)
if [ -r "$state.env" ]; then
	# ibkey quotes a value for a shell where it must ('ib-job#1'), but Slurm sets
	# the text after "=" as it is (slurmstepd's task.c, _proc_stdout): the shell
	# unquotes the export lines (of shell-safe names: ibkey writes nothing else)
	# and they are printed again unquoted.
	lines=$(grep -E '^export [A-Za-z_][A-Za-z0-9_]*=' "$state.env")
	eval "$lines" || {
		echo "print ibkey: $state.env: not shell export lines"
		exit 1
	}
	names=$(printf '%s\n' "$lines" | sed 's/^export \([A-Za-z0-9_]*\)=.*/\1/')
	for n in $names; do
		# Slurm reads one variable a line (task.c, _proc_stdout): a value holding a
		# newline would set another. ibkey writes none; refuse one before printing.
		case ${!n} in
		*$'\n'*)
			echo "print ibkey: $state.env: $n holds a newline"
			exit 1
			;;
		esac
	done
	for n in $names; do
		printf 'export %s=%s\n' "$n" "${!n}"
	done
	exit 0
fi
for f in "$state.fail" "$state.warn"; do
	[ -r "$f" ] || continue
	while IFS= read -r line; do
		printf 'print ibkey: %s\n' "$line"
	done <"$f"
	if [ "$f" = "$state.fail" ]; then
		exit 1
	fi
	exit 0
done
exit 0
