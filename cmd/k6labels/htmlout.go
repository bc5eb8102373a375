package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// writeDiff writes d in format f, and the worst row's diff flame graph to
// svgFile unless it is "": when that row has no profile in both runs, it
// warns on stderr and writes no file.
func writeDiff(w, stderr io.Writer, d *report.Diff, f output.Format, svgFile string) error {
	var err error
	if f == output.HTML {
		err = htmlreport.WriteDiff(w, d)
	} else {
		err = output.WriteDiff(w, d, f)
	}
	if err != nil || svgFile == "" {
		return err
	}
	var b bytes.Buffer
	if err := htmlreport.WriteDiffSVG(&b, d); errors.Is(err, report.ErrNoData) {
		fmt.Fprintf(stderr, "k6labels: warning: --svg %s not written: %v\n", svgFile, err)
		return nil
	} else if err != nil {
		return fmt.Errorf("--svg %s: %w", svgFile, err)
	}
	if err := os.WriteFile(svgFile, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	return nil
}
