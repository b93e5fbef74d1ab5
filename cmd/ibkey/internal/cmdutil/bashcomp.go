package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Bash completion: cobra's bash V2 script (v1.10) corrupts the line when a value
// holds a character bash splits words at (COMP_WORDBREAKS: = and :) after one that
// printf %q escapes (a comma): `can-talk mlx5_0/1,pkey=<TAB>` inserted
// `mlx5_0/1\,pkey=` again on every TAB. Bash replaces only the text after the last
// word-break character (bash(1), COMP_WORDBREAKS), but the script filters the
// %q-escaped choices against the raw word and strips the prefix from the escaped
// single choice, which never matches (spf13/cobra#1740, #2334 are the upstream
// reports). GenBashCompletion writes cobra's script with the matching and prefix
// handling replaced: choices are compared with the word as the program saw it
// (quotes and backslashes removed), made relative to what bash replaces, and escaped
// only when bash inserts them, and then only where the shell needs it (not a comma).

// bashCompletionTypes replaces __NAME_handle_completion_types and its helper.
const bashCompletionTypes = `__NAME_unquote() {
    # The word as the program receives it: backslashes and quotes removed.
    local s=$1 out="" c q="" i
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if [[ -z $q && $c == \\ ]]; then
            ((i++))
            out+=${s:i:1}
        elif [[ -z $q && ( $c == "'" || $c == '"' ) ]]; then
            q=$c
        elif [[ -n $q && $c == "$q" ]]; then
            q=""
        elif [[ $q == '"' && $c == \\ ]]; then
            ((i++))
            out+=${s:i:1}
        else
            out+=$c
        fi
    done
    printf '%s' "$out"
}

__NAME_handle_completion_types() {
    __NAME_debug "__NAME_handle_completion_types: COMP_TYPE is $COMP_TYPE"
    local tab=$'\t'
    (( ${#completions[@]} == 0 )) && return 0

    # Bash replaces only the text after the last COMP_WORDBREAKS character of the
    # word (= and : rejoined by _init_completion -n =:); the part before it stays.
    local word keep="" ukeep="" i c
    word=$(__NAME_unquote "$cur")
    for ((i = ${#cur} - 1; i >= 0; i--)); do
        c=${cur:i:1}
        if [[ ( $c == = || $c == : ) && "$COMP_WORDBREAKS" == *"$c"* && ( $i == 0 || ${cur:i-1:1} != \\ ) ]]; then
            keep=${cur:0:i+1}
            break
        fi
    done
    ukeep=$(__NAME_unquote "$keep")

    local compline comp longest=0 matches=()
    while IFS='' read -r compline; do
        [[ -z $compline ]] && continue
        comp=${compline%%$tab*}
        [[ $comp == "$word"* ]] || continue
        matches+=("${compline#"$ukeep"}")
        comp=${comp#"$ukeep"}
        ((${#comp} > longest)) && longest=${#comp}
    done < <(printf "%s\n" "${completions[@]}")

    COMPREPLY=()
    (( ${#matches[@]} == 0 )) && return 0
    # Escaped, without descriptions, when bash inserts the choices (one choice; the
    # common prefix on the first TAB; menu-complete, insert-completions); as they
    # are, with descriptions, when it only lists them.
    if (( ${#matches[@]} == 1 )) || [[ $COMP_TYPE == 9 || $COMP_TYPE == 33 || $COMP_TYPE == 37 || $COMP_TYPE == 42 || -z $COMP_TYPE ]]; then
        for comp in "${matches[@]}"; do
            # printf %q escapes a comma, which the shell does not need escaped: a
            # value list such as mlx5_0/1,index= stays as typed.
            comp=$(printf '%q' "${comp%%$tab*}")
            COMPREPLY+=("${comp//\\,/,}")
        done
        return 0
    fi
    COMPREPLY=("${matches[@]}")
    __NAME_format_comp_descriptions $longest
}
`

// bashSpecialCharCalls is cobra's prefix stripping, now only for file completion.
const (
	bashSpecialCharCalls = `    else
        __NAME_handle_completion_types
    fi

    __NAME_handle_special_char "$cur" :
    __NAME_handle_special_char "$cur" =
`
	bashSpecialCharFiles = `    else
        __NAME_handle_completion_types
    fi

    if (((directive & (shellCompDirectiveFilterFileExt | shellCompDirectiveFilterDirs)) != 0)); then
        __NAME_handle_special_char "$cur" :
        __NAME_handle_special_char "$cur" =
    fi
`
)

// GenBashCompletion writes root's bash completion script (cobra's V2 script with the
// word-break handling above).
func GenBashCompletion(root *cobra.Command, w io.Writer, descriptions bool) error {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, descriptions); err != nil {
		return err
	}
	script, err := patchBashCompletion(b.String(), root.Name())
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, script)
	return err
}

func patchBashCompletion(script, name string) (string, error) {
	fn := func(s string) string { return strings.ReplaceAll(s, "__NAME_", "__"+name+"_") }
	start := strings.Index(script, fn("__NAME_handle_completion_types() {\n"))
	if start < 0 {
		return "", fmt.Errorf("bash completion: cobra's script has no %s", fn("__NAME_handle_completion_types"))
	}
	end := strings.Index(script[start:], "\n}\n")
	if end < 0 {
		return "", fmt.Errorf("bash completion: %s does not end", fn("__NAME_handle_completion_types"))
	}
	script = script[:start] + fn(bashCompletionTypes) + script[start+end+3:]
	if !strings.Contains(script, fn(bashSpecialCharCalls)) {
		return "", fmt.Errorf("bash completion: cobra's script does not strip prefixes as expected")
	}
	return strings.Replace(script, fn(bashSpecialCharCalls), fn(bashSpecialCharFiles), 1), nil
}

// UseFixedBashCompletion gives root cobra's completion command with `completion bash`
// writing GenBashCompletion's script.
func UseFixedBashCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	sh, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || sh.Name() != "bash" {
		return
	}
	sh.RunE = func(c *cobra.Command, args []string) error {
		noDesc, _ := c.Flags().GetBool("no-descriptions")
		return GenBashCompletion(root, c.OutOrStdout(), !noDesc)
	}
	sh.Run = nil
}
