//go:build ignore

// Command opensm-messages lists the messages of an OpenSM source tree that are
// logged at a level other than debug, or carry an ERR or WRN code: the table
// opensm-3.3.23-messages.tsv, which TestOpenSMErrorTable and TestWordingFromSource
// read. From the top of the repository, with OpenSM's source
// (github.com/linux-rdma/opensm, tag 3.3.23) in SRC:
//
//	go run internal/smlog/testdata/opensm-messages.go SRC > internal/smlog/testdata/opensm-3.3.23-messages.tsv
//
// It reads opensm/, libopensm/ and libvendor/osm_vendor_ibumad*.c: the Linux build
// (config/osmvsel.m4: the default vendor is openib, osm_vendor_ibumad.c). Each line:
// the source file and line, the C function (OSM_LOG prefixes the message with
// __func__, include/opensm/osm_log.h; "-" for osm_log_v2 called directly, which has
// no such prefix), the level argument as written, the code, and the format string
// (adjacent literals joined, PRIx64 and the like as l conversions, other macros as
// <NAME>, newlines and tabs as \n and \t). A message whose format is built in
// a way this does not read (an #ifdef between the call and its format: ERR 5421)
// is not listed.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	funcStart = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_ \t\*]*?[ \t\*])?([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	codeRE    = regexp.MustCompile(`(ERR|WRN) ([0-9A-F]{4})`)
	identRE   = regexp.MustCompile(`^[A-Za-z0-9_]+`)
	macros    = map[string]string{"PRIx64": "lx", "PRIu64": "lu", "PRId64": "ld", "PRIx32": "x", "PRIu32": "u", "PRIx16": "x", "PRIu16": "u", "PRIx8": "x", "PRIu8": "u"}
)

func main() {
	root := os.Args[1]
	var files []string
	for _, pattern := range []string{"opensm/*.c", "opensm/*.y", "libopensm/*.c", "libvendor/osm_vendor_ibumad*.c"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(m) == 0 {
			fmt.Fprintln(os.Stderr, "opensm-messages: nothing at", filepath.Join(root, pattern))
			os.Exit(1)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	fmt.Println("# source\tfunction\tlevel\tcode\tformat")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "opensm-messages:", err)
			os.Exit(1)
		}
		rel, _ := filepath.Rel(root, f)
		scan(rel, string(b))
	}
}

type definition struct {
	off  int
	name string
}

// definitions are the C functions defined in src, by the offset of their first line:
// a line at column 0 naming a function, followed by a "{" line at column 0.
func definitions(src string) []definition {
	var defs []definition
	lines := strings.SplitAfter(src, "\n")
	off := 0
	for i, l := range lines {
		if m := funcStart.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "#") && !strings.HasSuffix(strings.TrimSpace(l), ";") {
			for j := i; j < len(lines) && j < i+12; j++ {
				if strings.HasPrefix(lines[j], "{") {
					defs = append(defs, definition{off, m[1]})
					break
				}
				if strings.HasSuffix(strings.TrimSpace(lines[j]), ";") {
					break
				}
			}
		}
		off += len(l)
	}
	return defs
}

func scan(file, src string) {
	defs := definitions(src)
	funcAt := func(o int) string {
		name := ""
		for _, d := range defs {
			if d.off > o {
				break
			}
			name = d.name
		}
		return name
	}
	type row struct {
		off  int
		text string
	}
	var rows []row
	for _, call := range []string{"OSM_LOG(", "osm_log_v2(", "osm_log("} {
		for i := 0; ; {
			j := strings.Index(src[i:], call)
			if j < 0 {
				break
			}
			start := i + j
			i = start + len(call)
			if start > 0 {
				if c := src[start-1]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
					continue
				}
				if strings.HasSuffix(strings.TrimRight(src[:start], " \t"), "#define") {
					continue
				}
			}
			args, ok := splitArgs(src[i:])
			k, fn := 2, funcAt(start)
			if call != "OSM_LOG(" {
				k, fn = 3, "-"
			}
			if !ok || len(args) <= k {
				continue
			}
			format, ok := cstring(args[k])
			if !ok {
				continue
			}
			level := strings.Join(strings.Fields(args[1]), "")
			m := codeRE.FindStringSubmatch(format)
			if strings.Contains(level, "OSM_LOG_DEBUG") && m == nil {
				continue
			}
			code := ""
			if m != nil {
				code = m[1] + " " + m[2]
			}
			format = strings.TrimRight(format, "\n")
			format = strings.ReplaceAll(strings.ReplaceAll(format, "\n", `\n`), "\t", `\t`)
			line := strings.Count(src[:start], "\n") + 1
			rows = append(rows, row{start, fmt.Sprintf("%s:%d\t%s\t%s\t%s\t%s", file, line, fn, level, code, format)})
		}
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].off < rows[b].off })
	for _, r := range rows {
		fmt.Println(r.text)
	}
}

// splitArgs splits a call's arguments (the text after its open parenthesis) at
// top-level commas.
func splitArgs(s string) ([]string, bool) {
	var args []string
	depth, last := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return append(args, s[last:i]), true
			}
			depth--
		case c == ',' && depth == 0:
			args = append(args, s[last:i])
			last = i + 1
		}
	}
	return nil, false
}

// cstring reads adjacent C string literals and macros as one string.
func cstring(s string) (string, bool) {
	var b strings.Builder
	s = strings.TrimSpace(s)
	literals := 0
	for len(s) > 0 {
		switch {
		case s[0] == '"':
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(s[i])
					}
					continue
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", false
			}
			s = strings.TrimSpace(s[i+1:])
			literals++
		case strings.HasPrefix(s, "/*"):
			e := strings.Index(s, "*/")
			if e < 0 {
				return "", false
			}
			s = strings.TrimSpace(s[e+2:])
		default:
			m := identRE.FindString(s)
			if m == "" {
				return "", false
			}
			v, ok := macros[m]
			if !ok {
				v = "<" + m + ">"
			}
			b.WriteString(v)
			s = strings.TrimSpace(s[len(m):])
		}
	}
	return b.String(), literals > 0
}
