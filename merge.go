package k6labels

import "strings"

// MergeBaggage returns a single baggage header value that holds the members
// of existing (the baggage header lines, or gRPC metadata values, an outgoing
// request already carries) and the members of add (typically [Baggage] of the
// incoming request's context), for a client to send downstream.
//
// A member of existing whose key is also in add is replaced by add's member,
// so no key is sent twice; every other member of existing is kept as it was
// written, properties included, before add's members. Malformed members of
// existing are dropped, as a receiver may do.
//
// The result stays within the W3C limits, [MaxBaggageBytes] and
// [MaxBaggageMembers]. If both lists together do not fit, members are dropped
// whole, never cut: add's members are kept first, because carrying the k6
// labels to the next service is why this is called, then members of existing
// in order as long as they fit.
//
// With no existing lines and an add that is within the limits, add itself is
// returned, without allocating.
func MergeBaggage(existing []string, add string) string {
	if len(existing) == 0 && len(add) <= MaxBaggageBytes && strings.Count(add, ",") < MaxBaggageMembers {
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

	sc := newScanner([]string{add})
	for {
		key, _, ok, more := sc.next()
		if !more {
			break
		}
		if !ok {
			continue
		}
		// A key given twice in add: the last one wins, as on the receiving
		// side. The earlier one is taken out, then the new one must fit.
		for i := 0; i < n; i++ {
			if keys[i] == key {
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
		keep(key, sc.member)
	}
	nAdd := n

	sc = newScanner(existing)
scan:
	for {
		key, _, ok, more := sc.next()
		if !more {
			break
		}
		if !ok {
			continue
		}
		for _, k := range keys[:nAdd] {
			if k == key {
				continue scan
			}
		}
		keep(key, sc.member)
	}

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
