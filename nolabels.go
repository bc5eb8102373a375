package k6labels

// A line that makes no labels (baggage without k6 members) is remembered by
// the line cache as "no labels" once it comes a second time, so that a
// service whose clients send the same non-k6 baggage on every request does
// not scan it on every request. BenchmarkNonK6Line, instructions per request
// (Valgrind, (I(3N) - I(N)) / 2N, N = 20000, GOGC=off, one P), before the
// cache remembered "no labels" and after:
//
//	line=cached  "userId=alice,serverNode=DF%2028,isProduction=false"  3,054 → 528 (0.17×)
//	line=scan    a new non-k6 line on every request                    3,343 → 3,844 (1.15×: the mark)
//	line=k6      k6's line, from the cache                             1,016 → 1,017
//
// The first sighting only marks the line's hash in a free slot: baggage
// with a new value on every request (a request id) is never cached, costs
// no allocation, and never evicts a cached line.

// seenOnce marks a slot whose hash is that of a line seen once that made no
// labels. Its config key, 0, matches no Labeler's, so no lookup returns it.
var seenOnce = &lineEntry{}

// seenUnlabelled reports whether line, which made no labels under config key
// cfg, was seen before; if not, it marks the line in a free slot of its
// sets, if one is free. A hash that another line shares only makes that
// line cached sooner: the entry holds the line, and lookups compare it.
func (r *Registry) seenUnlabelled(cfg uint64, line string) bool {
	h, a, b := r.lineSets(cfg, line)
	free := -1
	for _, i := range [2]uint64{a, b} {
		set := r.lineSet(i)
		for k := range set {
			switch e := set[k].entry.Load(); {
			case e == nil:
				if free < 0 {
					free = int(i) + k
				}
			case e == seenOnce && set[k].hash.Load() == h:
				set[k].entry.Store(nil) // free for the entry
				return true
			}
		}
	}
	if free >= 0 {
		r.lines[free].entry.Store(seenOnce)
		r.lines[free].hash.Store(h)
	}
	return false
}
