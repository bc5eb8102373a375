// Package w3c is the byte-level stage of k6labels: it reads W3C baggage
// header lines (the scanner, the grammar of keys, values and members),
// percent-decodes values (decodeAt is the one decoder), cleans them into
// label values (invalid UTF-8 and control characters to U+FFFD, cut at a
// whole character), encodes values for a header, rewrites keys into label
// names, and cuts query strings from k6.name URLs. It imports nothing of
// k6labels; the limits are parameters.
//
// A label value is decoded and cleaned in one pass over the raw value
// (clean): a byte or escape at a time, each character checked as it is
// decoded and written straight into the Arena, stopping at the cap. The
// hex digits' values are in the grammar table, beside their class.
//
// The code is plain but for three fast paths. Two are kept for their
// figures on a k6 request's input (go test -run '^$' -bench
// 'LastComma|QueryMark' -count 8, then benchstat -col /impl; "fast" is the
// package's code, "plain" what it would be without the trick, both in
// bench_test.go):
//
//   - LastComma, eight bytes a step (SWAR): 23.8 ns fast, 37.5 ns plain
//     (strings.LastIndexByte, a byte loop), 1.6x, on a 103-byte k6 line
//     (BenchmarkLastComma/in=k6.tes_103); 2.1x over 8 KB without a comma.
//     A line cache miss looks back from its end; the cache key of a line
//     whose query string is not in its last member looks back from a '?'.
//   - queryMark, two strings.IndexByte calls (vector search) instead of
//     strings.IndexAny(s, "?#") (a byte loop): 27 ns fast, 290 ns plain,
//     10.7x, on the same line (BenchmarkQueryMark/in=k6.tes_103). Every
//     k6.name of a cache miss, and every line whose query string is not in
//     its last member, is searched.
//
// The third bounds a crafted header: separators steps over a pair of
// commas at a time, a plain loop unrolled once: 8 KB of commas cost 71k
// instructions a Labeler.Context call, not 83k (make bench-crafted).
//
// Two unsafe.String calls hand out bytes as strings without a copy, each
// pinned by a root allocation test that fails without it: Arena's (its
// strings stay on the request's stack: TestCraftedAllocs,
// TestOversizedSetCached) and WithoutQueries' (TestNewQueryEachRequestHitsCache).
//
// Fast paths measured against the plain code and not kept (figures in
// the commit that removed them, on a loaded 2-core machine): the
// shift-DFA decoder with unchecked loads (BenchmarkValue: no difference
// on k6's values with raw or escaped UTF-8; 2.3-4.9x faster only on
// 256-byte values built to be expensive), the SWAR run of separators
// (plain 1.6x faster before a k6 member; 4.9x slower on 8 KB of commas),
// and the SWAR name check (no difference on k6's keys; 2x on a 128-byte
// key).
package w3c
