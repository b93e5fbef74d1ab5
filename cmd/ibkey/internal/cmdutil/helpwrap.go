package cmdutil

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// WrapHelp reflows a command's long help to width columns, at spaces, never inside a
// word. The help is written as paragraphs (lines of one indentation), list items ("- "
// with their continuation indented under the text) and two-column rows (a term, two or
// more spaces, its text, continued under the text): each is reflowed as a unit, with
// its first line's prefix and its continuation indent kept. Lines of a paragraph that
// fit stay as they are written when the paragraph needs no reflow.
func WrapHelp(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); {
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		prefix, indent, text := helpItem(lines[i], next)
		j := i + 1
		if text != "" {
			for j < len(lines) && continues(lines[j], indent) {
				text = joinLine(text, strings.TrimSpace(lines[j]))
				j++
			}
		}
		block := lines[i:j]
		if fits(block, width) || text == "" {
			out = append(out, block...)
		} else {
			out = append(out, fill(prefix, indent, text, width)...)
		}
		i = j
	}
	return strings.Join(out, "\n")
}

// joinLine joins a continuation line to text: with a space, but where a JSON shape
// was broken after a comma, a bracket or a key's colon ("...,\n\"ports\":[...",
// "{NAME:\n{...") the break was no space. A sentence's colon before a shape ("one
// object per line:\n{...": no quote or bracket in its last word) keeps its space.
func joinLine(text, next string) string {
	last := text[strings.LastIndexByte(text, ' ')+1:]
	keyColon := strings.HasSuffix(last, ":") && strings.ContainsAny(last, `"{[`)
	if strings.HasSuffix(text, ",") || strings.HasSuffix(text, "[") || strings.HasSuffix(text, "{") || keyColon {
		if strings.HasPrefix(next, `"`) || strings.HasPrefix(next, "{") || strings.HasPrefix(next, "[") {
			return text + next
		}
	}
	return text + " " + next
}

// helpItem splits the first line of an item (next is the line after it): prefix is
// what stays in front of its first line (indentation, a "- " marker, a term and its
// padding), indent the continuation lines' indentation, text the words to fill.
func helpItem(l, next string) (prefix, indent, text string) {
	trimmed := strings.TrimLeft(l, " ")
	lead := l[:len(l)-len(trimmed)]
	if trimmed == "" {
		return l, "", ""
	}
	if rest, ok := strings.CutPrefix(trimmed, "- "); ok {
		return lead + "- ", lead + "  ", rest
	}
	// A two-column row: a term, then a run of two or more spaces, then its text. A
	// term may hold such a run itself ("lid=3  lid=3,port=2"): the text starts where
	// the next line's continuation does, when it is indented under it.
	nextIndent := len(next) - len(strings.TrimLeft(next, " "))
	textAt := -1
	for k := 0; k+1 < len(trimmed); k++ {
		if trimmed[k] != ' ' || trimmed[k+1] != ' ' {
			continue
		}
		j := k
		for j < len(trimmed) && trimmed[j] == ' ' {
			j++
		}
		if j == len(trimmed) {
			break
		}
		if textAt < 0 || len(lead)+j == nextIndent {
			textAt = j
		}
		k = j
	}
	if textAt > 0 {
		col := strings.Repeat(" ", utf8.RuneCountInString(lead+trimmed[:textAt]))
		return lead + trimmed[:textAt], col, trimmed[textAt:]
	}
	return lead, lead, trimmed
}

// continues says whether l continues the item whose continuation indent is indent:
// it has exactly that indentation and starts no new item.
func continues(l, indent string) bool {
	trimmed := strings.TrimLeft(l, " ")
	if trimmed == "" || len(l)-len(trimmed) != len(indent) {
		return false
	}
	return !strings.HasPrefix(trimmed, "- ") && !strings.Contains(trimmed, "  ")
}

func fits(lines []string, width int) bool {
	return !slices.ContainsFunc(lines, func(l string) bool { return utf8.RuneCountInString(l) > width })
}

// fill writes text's words after prefix, then after indent, in lines of at most
// width columns. A word may also break after a comma (the JSON shapes in help are
// long words); a piece longer than a line stands alone on its line (fillPieces).
func fill(prefix, indent, text string, width int) []string {
	lines := fillPieces(text, width-utf8.RuneCountInString(prefix), width-utf8.RuneCountInString(indent))
	for i, l := range lines {
		if i == 0 {
			lines[i] = prefix + l
		} else {
			lines[i] = indent + l
		}
	}
	return lines
}
