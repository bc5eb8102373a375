// Package show is the application side of the examples: handler bodies that
// answer with the pprof labels their context carries, so that a curl (or a
// test) sees what a CPU profile of the handler would be labelled with.
package show

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime/pprof"
)

// Labels returns the pprof labels of ctx as a map (empty, never nil).
func Labels(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

// Write answers with the pprof labels of ctx as a JSON object.
func Write(ctx context.Context, w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(Labels(ctx)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Handler answers every request with the labels of the request's context.
func Handler(w http.ResponseWriter, r *http.Request) {
	Write(r.Context(), w)
}
