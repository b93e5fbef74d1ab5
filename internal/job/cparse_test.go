package job

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// libcProgram prints, for each input (a line "x" + hex), what glibc makes of it:
// strtoll base 0 and 10 and strtoull base 0 (value, end offset, ERANGE),
// sscanf("%x") into an unsigned int (converted, value), atoi, and strtol base 0 cast
// to int and to uint8_t (perftest's CHECK_VALUE, NVSHMEM's int variables).
const libcProgram = `#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int hexval(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }
int main(void) {
#ifndef __GLIBC__
	return 3;
#endif
	static char line[8192], s[4096];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		size_t k = 0;
		for (size_t i = 1; line[i] && line[i + 1]; i += 2)
			s[k++] = (char)(hexval(line[i]) * 16 + hexval(line[i + 1]));
		s[k] = 0;
		char *end;
		printf("%s", line);
		errno = 0;
		long long v = strtoll(s, &end, 0);
		printf(" %lld %td %d", v, end - s, errno == ERANGE);
		errno = 0;
		v = strtoll(s, &end, 10);
		printf(" %lld %td %d", v, end - s, errno == ERANGE);
		errno = 0;
		unsigned long long u = strtoull(s, &end, 0);
		printf(" %llu %td %d", u, end - s, errno == ERANGE);
		unsigned int x = 0;
		int r = sscanf(s, "%x", &x);
		printf(" %d %u", r == 1, r == 1 ? x : 0);
		long l = strtol(s, NULL, 0);
		printf(" %d %d %u\n", atoi(s), (int)l, (unsigned)(uint8_t)l);
	}
	return 0;
}
`

// runC compiles program with cc and runs it with input on its standard input: what
// it wrote there, and its exit code.
func runC(t *testing.T, cc, program string, input io.Reader) ([]byte, int) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-O0", "-o", filepath.Join(dir, "prog"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(dir, "prog"))
	cmd.Stdin = input
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out, cmd.ProcessState.ExitCode()
}

// libcInputs are the generated inputs: white space, signs, base prefixes (a second
// 0x among them), digits of each base around 2^32, 2^63 and 2^64, and trailing text.
func libcInputs() []string {
	rng := rand.New(rand.NewPCG(11, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	in := []string{"", " ", "-", "0x", "0x100000001", "100000001", "-ffffffff", "0x0x5", " +7", "fffe", "08", "010", "1k", "0b11", "1_0"}
	for len(in) < 1500 {
		digits := pick("0123456789", "01234567", "0123456789abcdefABCDEF", "0f", "9")
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteByte(digits[rng.IntN(len(digits))])
		}
		body := pick(b.String(), b.String(), "ffffffff", "100000000", "fffe", "7fff", "8000", "ffffffffffffffff",
			"10000000000000000", "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616")
		in = append(in, pick("", "", " ", "\t", " \n")+pick("", "", "+", "-", "+-")+pick("", "", "0", "0x", "0X", "0x0x", "x")+body+pick("", "", "z", " ", "k", ".5", "_1", "0b1", "g"))
	}
	return in
}

// TestLibcNumbers checks parseC, Unsigned, scanHex, atoi and strtolInt against glibc: with a C compiler
// the generated inputs run through the C functions themselves (glibc 2.36 recorded
// the table), and the committed table (testdata/TestLibcNumbers.golden) holds what
// they gave, for machines without one (`go test -run TestLibcNumbers -update` with a
// C compiler rewrites it).
func TestLibcNumbers(t *testing.T) {
	var input, got bytes.Buffer
	b2i := map[bool]int{false: 0, true: 1}
	for _, s := range libcInputs() {
		h := "x" + hex.EncodeToString([]byte(s))
		a, d := parseC(s, 0), parseC(s, 10)
		x, ok := scanHex(s)
		fmt.Fprintln(&input, h)
		fmt.Fprintf(&got, "%s %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", h,
			a.Value, len(s)-len(a.Rest), b2i[a.Overflow], d.Value, len(s)-len(d.Rest), b2i[d.Overflow],
			a.Unsigned(), len(s)-len(a.Rest), b2i[a.wide], b2i[ok], x, atoi(s), a.Int(), uint8(a.Value))
	}
	cc, err := exec.LookPath("cc")
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	switch {
	case err != nil && update:
		t.Fatal("-update needs a C compiler (cc): the table is what glibc gives")
	case err == nil:
		want, code := runC(t, cc, libcProgram, &input)
		if code == 3 {
			t.Log("the C library is not glibc: only the committed table is compared")
			break
		}
		if code != 0 {
			t.Fatalf("the C program exited %d", code)
		}
		if w, g := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n"); string(want) != got.String() {
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Fatalf("line %d: glibc %q, ibkey %q", i+1, w[i], g[i])
				}
			}
			t.Fatalf("glibc gave %d lines, ibkey %d", len(w), len(g))
		}
	}
	golden.RequireEqual(t, got.String())
}
