package job

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Version is a library release as the library spells it (--lib-version): numbers
// separated by '.' or '-', major and minor at least (NCCL 2.29.2 or its tag form
// 2.29.2-1, UCX 1.13.1, Open MPI 4.1.4, perftest 4.5-0.17).
type Version struct {
	text string
	nums []int
}

// ParseVersion reads a release; ok is false for anything else.
func ParseVersion(s string) (v Version, ok bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' })
	if len(parts) < 2 || strings.Count(s, ".")+strings.Count(s, "-") != len(parts)-1 {
		return Version{}, false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p[0] == '+' || len(p) > 9 {
			return Version{}, false
		}
		v.nums = append(v.nums, n)
	}
	v.text = s
	return v, true
}

func (v Version) String() string { return v.text }

// compare orders v and the release r ("2.30"): a missing number is 0, so 2.30 is
// 2.30.0 and 2.29.2-1 comes after 2.29.2.
func (v Version) compare(r string) int {
	w, ok := ParseVersion(r)
	if !ok {
		panic("job: bad release " + r) // the splits' own constants
	}
	for i := range max(len(v.nums), len(w.nums)) {
		a, b := 0, 0
		if i < len(v.nums) {
			a = v.nums[i]
		}
		if i < len(w.nums) {
			b = w.nums[i]
		}
		if c := cmp.Compare(a, b); c != 0 {
			return c
		}
	}
	return 0
}

// Versions are the job's library versions by library ID (--lib-version); a library
// missing has no version given.
type Versions map[string]Version

// releases are the releases of a library whose behaviour ibkey models: from oldest
// on, and below below ("": every later release, read as the newest reading); span
// says which, for messages. A library without (oldest "") has no version split:
// any version is read alike.
type releases struct{ oldest, below, span string }

// libVersion is the job's version of one library, as every version split reads it
// (version, set by Library.setup): which reading applies, or that it is not known.
type libVersion struct {
	lib *Library
	v   Version
	// given: --lib-version named the library; modelled: its release is one ibkey
	// models (l.releases), else every split stays not checked (notModelled).
	given, modelled bool
}

// version is the job's version of l (nil: none).
func (in Inputs) version(l *Library) libVersion {
	if l == nil {
		return libVersion{}
	}
	v, ok := in.Versions[l.ID]
	lv := libVersion{lib: l, v: v, given: ok}
	if ok {
		r := l.releases
		lv.modelled = r.oldest == "" || v.compare(r.oldest) >= 0 && (r.below == "" || v.compare(r.below) < 0)
	}
	return lv
}

// String names the version and where it comes from: "NCCL 2.29.2 (--lib-version)".
func (lv libVersion) String() string {
	name, _, _ := strings.Cut(lv.lib.Name, " (") // "Open MPI (openib)": Open MPI
	return fmt.Sprintf("%s %s (--lib-version)", name, lv.v)
}

// reading is which of a split's readings applies: the readings start at the
// releases given, newest first, so 0 is the newest, len(starts) older than every
// start (down to the oldest release modelled); -1 when the version is not known
// (not given, or not modelled).
func (lv libVersion) reading(starts ...string) int {
	if !lv.modelled {
		return -1
	}
	i := slices.IndexFunc(starts, func(r string) bool { return lv.v.compare(r) >= 0 })
	if i < 0 {
		return len(starts)
	}
	return i
}

// since says whether the version is release or later; known is false when the
// version is not known.
func (lv libVersion) since(release string) (yes, known bool) {
	i := lv.reading(release)
	return i == 0, i >= 0
}

// notModelled, for a version given that ibkey does not model, says so: every
// answer of the library depends on it.
func (lv libVersion) notModelled() string {
	if !lv.given || lv.modelled {
		return ""
	}
	if lv.v.compare(lv.lib.releases.oldest) < 0 {
		return fmt.Sprintf("%s is older than any release ibkey models (%s): what it does is not checked", lv, lv.lib.releases.span)
	}
	return fmt.Sprintf("%s is not a release ibkey models (%s): what it does is not checked", lv, lv.lib.releases.span)
}

// ParseLibVersions reads --lib-version values, LIB=VERSION each, several
// comma-separated in one: the versions, or an error naming the bad token and what
// is accepted.
func ParseLibVersions(values []string) (Versions, error) {
	out := Versions{}
	for _, val := range values {
		for _, tok := range strings.Split(val, ",") {
			id, ver, ok := strings.Cut(strings.TrimSpace(tok), "=")
			l, known := LookupLibrary(id)
			switch {
			case !ok:
				return nil, fmt.Errorf("invalid --lib-version %q (accepted: LIB=VERSION, e.g. nccl=2.29.2, LIB one of %s)", tok, strings.Join(LibraryIDs(), ", "))
			case !known:
				return nil, fmt.Errorf("invalid --lib-version %q: no library %q (accepted: %s)", tok, id, strings.Join(LibraryIDs(), ", "))
			}
			v, ok := ParseVersion(ver)
			if !ok {
				return nil, fmt.Errorf("invalid --lib-version %q: %q is not a release (accepted: numbers separated by '.' or '-', as the library spells its release: 2.29.2, 2.29.2-1, 4.5-0.17)", tok, ver)
			}
			if w, dup := out[l.ID]; dup && w.compare(ver) != 0 {
				return nil, fmt.Errorf("invalid --lib-version %q: %s is already %s (one version per library)", tok, l.ID, w)
			}
			out[l.ID] = v
		}
	}
	return out, nil
}
