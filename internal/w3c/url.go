package w3c

import (
	"strings"
	"unsafe"
)

// LooksLikeURL reports whether a k6.name value is a URL (or a path), whose
// query string and fragment are dropped: k6 names untagged requests by URL.
func LooksLikeURL(s string) bool {
	if strings.HasPrefix(s, "/") {
		return true
	}
	// A URL's first ':' is its scheme's: look there before scanning.
	i := strings.IndexByte(s, ':')
	return i >= 0 && (strings.HasPrefix(s[i+1:], "//") || strings.Contains(s[i+1:], "://"))
}

// CutQuery returns s without its query string and fragment: up to its
// first '?' or '#'.
func CutQuery(s string) string {
	if i := queryMark(s); i >= 0 {
		return s[:i]
	}
	return s
}

// queryMark returns the index of the first '?' or '#' in s, or -1.
// 10.7x on a 103-byte k6 line against strings.IndexAny (BenchmarkQueryMark, benchstat).
func queryMark(s string) int {
	i := strings.IndexByte(s, '?')
	end := len(s)
	if i >= 0 {
		end = i
	}
	if j := strings.IndexByte(s[:end], '#'); j >= 0 {
		return j
	}
	return i
}

// WithoutQueries returns line with the query string and fragment cut from
// every member that EndsInURLName accepts, and whether it cut any: a prefix
// of line where the only cut ends it (k6 sends k6.name last), else built in
// buf and sharing its memory, uncopied. Both make the same labels, so k6's
// URLs with a new id in each query share one cache entry.
func WithoutQueries(line string, buf []byte) (string, bool) {
	cut, from := false, 0 // line[from:] is still to be copied
	for at := 0; at < len(line); {
		q := queryMark(line[at:])
		if q < 0 {
			break
		}
		q += at
		// The member holding the mark, between the ','s around it.
		start := at + LastComma(line[at:q]) + 1
		end := len(line)
		if j := strings.IndexByte(line[q:], ','); j >= 0 {
			end = q + j
		}
		if EndsInURLName(line[start:q]) {
			if !cut && end == len(line) {
				return line[:q], true
			}
			buf = append(buf, line[from:q]...)
			from, cut = end, true
		}
		at = end
	}
	if !cut {
		return line, false
	}
	buf = append(buf, line[from:]...)
	// Uncopied: one allocation less per request (TestNewQueryEachRequestHitsCache).
	return unsafe.String(unsafe.SliceData(buf), len(buf)), true
}

// EndsInURLName reports whether member m, cut at a '?' or '#' that
// follows it, is a k6.name whose value is a URL (as the scanner reads a
// member) whose label is cut there: m, with or without a query string,
// makes the same label.
func EndsInURLName(m string) bool {
	const key = "k6.name"
	k := SkipOWS(m, 0)
	if !strings.HasPrefix(m[k:], key) {
		return false
	}
	eq := SkipOWS(m, k+len(key))
	if eq == len(m) || m[eq] != '=' {
		return false
	}
	// The value, without its spaces: a URL of itself, with no property
	// (the mark would be in the property), that ends as it would read
	// when trimmed.
	v := m[SkipOWS(m, eq+1):]
	return LooksLikeURL(v) && strings.IndexByte(v, ';') < 0 && v[len(v)-1] != ' ' && v[len(v)-1] != '\t'
}
