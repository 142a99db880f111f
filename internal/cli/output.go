package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Output formats accepted by --output.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// Printer writes a command's result either as aligned text tables for
// people or as one JSON document for scripts.
type Printer struct {
	w    io.Writer
	json bool
}

// NewPrinter checks the --output value.
func NewPrinter(w io.Writer, format string) (*Printer, error) {
	switch format {
	case OutputText, "":
		return &Printer{w: w}, nil
	case OutputJSON:
		return &Printer{w: w, json: true}, nil
	}
	return nil, fmt.Errorf("--output %q: want %s or %s", format, OutputText, OutputJSON)
}

// JSONMode reports whether the caller should emit JSON.
func (p *Printer) JSONMode() bool { return p.json }

// JSON writes v as one indented JSON document.
func (p *Printer) JSON(v any) error {
	enc := json.NewEncoder(p.w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Linef writes one line of text.
func (p *Printer) Linef(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Table writes rows under header with columns aligned by two spaces.
func (p *Printer) Table(header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	writeRow := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				io.WriteString(tw, "\t")
			}
			io.WriteString(tw, cell(c))
		}
		io.WriteString(tw, "\n")
	}
	writeRow(header)
	for _, r := range rows {
		writeRow(r)
	}
	return tw.Flush()
}

// cell keeps a table intact when a name holds tabs, newlines or other
// control characters (group names may): such cells are shown quoted.
func cell(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// joinInt32s renders replica lists the way kafka-topics does: "1,2,3".
func joinInt32s(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(int64(x), 10)
	}
	return strings.Join(parts, ",")
}
