package w3c

import "strings"

// A Scanner walks the members of one or more baggage header lines without
// allocating. Keys and raw values are substrings of the lines. It skips a
// member with no '=' or an empty key, and drops properties.
type Scanner struct {
	lines      []string
	line       string // the rest of the current line, within budget
	budget     int    // bytes still allowed after line
	members    int    // members returned or skipped so far
	lineCount  int    // lines taken from lines so far
	maxMembers int
	truncated  bool // a limit cut the list
}

// NewScanner returns a Scanner over lines that examines at most maxBytes
// bytes (a member cut by the limit is dropped whole, an empty line counts a
// byte) and at most maxMembers members and lines.
func NewScanner(lines []string, maxBytes, maxMembers int) Scanner {
	return Scanner{lines: lines, budget: maxBytes, maxMembers: maxMembers}
}

// Truncated reports whether a limit cut the list: a member or line past
// maxMembers, or a byte past maxBytes, was not examined.
func (s *Scanner) Truncated() bool { return s.truncated }

// Next returns the next member, OWS trimmed around its key and raw value.
// ok is false for a malformed member; more is false when the list (or a
// limit) is exhausted.
func (s *Scanner) Next() (key, rawValue string, ok, more bool) {
	for {
		for s.line == "" {
			if len(s.lines) == 0 || s.budget == 0 || s.lineCount == s.maxMembers {
				if len(s.lines) > 0 {
					s.truncated = true
				}
				return "", "", false, false
			}
			l := s.lines[0]
			s.lines = s.lines[1:]
			s.lineCount++
			if len(l) > s.budget {
				// Keep only whole members that end inside the budget: cut after
				// the last ',' in budget (the byte at budget itself may be one).
				s.truncated = true
				l = l[:max(LastComma(l[:s.budget+1]), 0)]
				s.lines = nil
			}
			s.budget -= min(max(len(l), 1), s.budget) // an empty line costs a byte too: the "," joining it
			s.line = l
		}
		s.line = s.line[separators(s.line):]
		if s.line == "" {
			continue
		}
		var m string
		if i := strings.IndexByte(s.line, ','); i >= 0 {
			m, s.line = s.line[:i], s.line[i+1:]
		} else {
			m, s.line = s.line, ""
		}
		m = TrimOWS(m)
		if m == "" {
			continue // empty list element, as in "a=1,,b=2": not a member
		}
		if s.members == s.maxMembers {
			s.truncated = true
			s.lines, s.line = nil, ""
			return "", "", false, false
		}
		s.members++
		if i := strings.IndexByte(m, ';'); i >= 0 {
			m = m[:i] // properties carry nothing we use
		}
		eq := strings.IndexByte(m, '=')
		if eq < 0 {
			return "", "", false, true
		}
		key = TrimOWS(m[:eq])
		if key == "" {
			return "", "", false, true
		}
		return key, TrimOWS(m[eq+1:]), true, true
	}
}

// separators returns the length of the run of ',', ' ' and '\t' that s
// starts with.
func separators(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ',' && i+1 < len(s) && s[i+1] == ',' { // two a step: 8 KB of commas 71k instructions, not 83k
			i++
			continue
		}
		if c != ',' && c != ' ' && c != '\t' {
			return i
		}
	}
	return len(s)
}

// TrimOWS removes the spaces and tabs (OWS) the grammar allows around
// keys, values and properties.
func TrimOWS(s string) string {
	s = s[SkipOWS(s, 0):]
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// SkipOWS returns the index of the first byte of s from i on that is not
// OWS (a space or a tab), or len(s).
func SkipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
