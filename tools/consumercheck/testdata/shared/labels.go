// The part every consumer program shares: consumercheck copies this file
// next to each program's main.go.
package main

import (
	"context"
	"runtime/pprof"
	"slices"
	"strings"
)

// labels returns the pprof labels of ctx as sorted "key=value" words.
func labels(ctx context.Context) string {
	var l []string
	pprof.ForLabels(ctx, func(k, v string) bool {
		l = append(l, k+"="+v)
		return true
	})
	slices.Sort(l)
	return strings.Join(l, " ")
}
