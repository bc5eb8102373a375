package main

import (
	"fmt"
	"io"
	"os"

	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// writeDiff writes d in format f, and the worst row's diff flame graph to
// svgFile unless it is "".
func writeDiff(w io.Writer, d *report.Diff, f report.Format, svgFile string) error {
	var err error
	if f == report.HTML {
		err = htmlreport.WriteDiff(w, d)
	} else {
		err = d.Write(w, f)
	}
	if err != nil || svgFile == "" {
		return err
	}
	out, err := os.Create(svgFile)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	err = htmlreport.WriteDiffSVG(out, d)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--svg %s: %w", svgFile, err)
	}
	return nil
}
