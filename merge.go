package k6labels

import (
	"strings"

	"github.com/k6labels/k6labels/internal/w3c"
)

// MergeBaggage returns a single baggage header value that holds the members
// of existing (the baggage header lines, or gRPC metadata values, an outgoing
// request already carries) and the members of add (typically [Baggage] of the
// incoming request's context), for a client to send downstream.
//
// A member of existing whose key is also in add is replaced by add's member,
// so no key is sent twice; a k6 key counts as the same key as another that
// makes the same label name ("k6.my-tag" and "k6.my_tag"), so no label is
// sent twice either. Every other member of existing is kept byte for byte,
// properties included, before add's members. A member of either list
// that is not valid W3C baggage (a space, '"' or '\' in its value, a control
// byte, a raw non-ASCII byte, a '%' not followed by two hex digits, a key
// that is not a token, a malformed property) is dropped on its own, so that
// a strict receiver does not drop the whole header for it; an add member
// dropped this way replaces nothing.
//
// The result stays within the W3C limits, [MaxBaggageBytes] and
// [MaxBaggageMembers]. If both lists together do not fit, members are dropped
// whole, never cut: add's members are kept first, because carrying the k6
// labels to the next service is why this is called, then members of existing
// in order as long as they fit. At most MaxBaggageBytes of existing are
// examined.
//
// With no existing lines and an add that is valid and within the limits,
// add itself is returned, without allocating.
func MergeBaggage(existing []string, add string) string {
	if len(existing) == 0 && len(add) <= MaxBaggageBytes && validList(add) {
		return add
	}
	// The members to keep, as written: add's in [0, nAdd), existing's after.
	var kept [MaxBaggageMembers]string
	var keys [MaxBaggageMembers]string // their keys, parallel to kept
	n, size := 0, 0
	// keep appends member m, with key, if it fits within the limits.
	keep := func(key, m string) {
		sep := 0
		if n > 0 {
			sep = 1
		}
		if n == MaxBaggageMembers || size+sep+len(m) > MaxBaggageBytes {
			return
		}
		size += sep + len(m)
		keys[n], kept[n] = key, m
		n++
	}

	addLines := [1]string{add}
	eachMember(addLines[:], func(key, m string) {
		// A key given twice in add: the last one wins, as on the receiving
		// side. The earlier one is taken out, then the new one must fit.
		for i := 0; i < n; i++ {
			if sameName(keys[i], key) {
				size -= len(kept[i])
				if n > 1 {
					size-- // its separator
				}
				copy(keys[i:n], keys[i+1:n])
				copy(kept[i:n], kept[i+1:n])
				n--
				break
			}
		}
		keep(key, m)
	})
	nAdd := n

	eachMember(existing, func(key, m string) {
		for _, k := range keys[:nAdd] {
			if sameName(k, key) {
				return
			}
		}
		keep(key, m)
	})

	// Existing members first, in their order, then add's, as k6 itself
	// appends its members to baggage a script has set.
	var b strings.Builder
	b.Grow(size)
	for i, m := range kept[nAdd:n] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	for i, m := range kept[:nAdd] {
		if i > 0 || n > nAdd {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	return b.String()
}

// eachMember calls f with the key and the text (OWS trimmed) of each valid
// member of lines, in order, within the first MaxBaggageBytes of lines
// (each line and each empty list element counting a byte for the ',' that
// joins it). A member cut by that limit is not examined.
func eachMember(lines []string, f func(key, member string)) {
	budget := MaxBaggageBytes + 1 // the last member needs no ',' after it
	for _, line := range lines {
		if budget <= 0 {
			return
		}
		cutShort := len(line) >= budget // work stays bounded whatever the line's length
		if cutShort {
			line = line[:budget]
		}
		for more := true; more; {
			var m string
			m, line, more = strings.Cut(line, ",")
			budget -= len(m) + 1
			if !more && cutShort {
				return // the member the limit cut
			}
			if m = w3c.TrimOWS(m); m == "" {
				continue
			}
			if key, ok := w3c.MemberKey(m); ok {
				f(key, m)
			}
		}
	}
}

// validList reports whether every list member of s is valid, s has no empty
// list elements and at most MaxBaggageMembers members: whether s can be sent
// as it is.
func validList(s string) bool {
	if s == "" {
		return true
	}
	for i, more := 0, true; more; i++ {
		var m string
		m, s, more = strings.Cut(s, ",")
		if i == MaxBaggageMembers {
			return false
		}
		if _, ok := w3c.MemberKey(w3c.TrimOWS(m)); !ok {
			return false
		}
	}
	return true
}
