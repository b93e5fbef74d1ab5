#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/ibkey/epilog.sh): removes what the
# Prolog left for the job. Runs as root on each of the job's nodes.
set -u
here=$(dirname "$0")
# shellcheck source=ibkey-slurm.sh
. "$here/ibkey-slurm.sh"
ibkey_load_config
state=$(ibkey_state)
# Every file of the job: .env, .fail, .warn, and the temporary files of a Prolog
# killed at PrologEpilogTimeout (run_command.c kills its process group).
rm -f -- "$state".*
exit 0
