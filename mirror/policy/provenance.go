package policy

import (
	"bytes"
	"strings"
)

// ProvenanceHeader is the record header in which Fjord's mirror source
// task lists the clusters a record has been written to before, so that
// active-active replication with identity names (A⇄B, same topic names
// on both sides) does not send a record back where it came from. MM2 has
// no such header and cannot run that topology.
//
// Format: the UTF-8 cluster aliases, in the order the record passed
// through them, separated by ","; a "," or "%" inside an alias is written
// as "%2C" or "%25" so any alias fits. A record produced on A and mirrored
// A→B→C carries "A,B" on C. The header is kept on every hop.
const ProvenanceHeader = "fjord-mirror-provenance"

// LoopsBack reports whether a record whose provenance header is
// provenance has already been written to targetAlias, so mirroring it
// there would close a loop. A record without the header (nil) came from a
// producer and never loops back.
func LoopsBack(provenance []byte, targetAlias string) bool {
	if len(provenance) == 0 {
		return false
	}
	want := []byte(escapeAlias(targetAlias))
	for part := range bytes.SplitSeq(provenance, []byte(",")) {
		if bytes.Equal(bytes.TrimSpace(part), want) {
			return true
		}
	}
	return false
}

// AppendProvenance returns the header value for the copy of a record
// that is mirrored out of sourceAlias: the record's provenance with
// sourceAlias added at the end (once: an alias already listed is not
// repeated). provenance is not modified.
func AppendProvenance(provenance []byte, sourceAlias string) []byte {
	if LoopsBack(provenance, sourceAlias) {
		return bytes.Clone(provenance)
	}
	alias := escapeAlias(sourceAlias)
	out := make([]byte, 0, len(provenance)+1+len(alias))
	out = append(out, provenance...)
	if len(provenance) > 0 {
		out = append(out, ',')
	}
	return append(out, alias...)
}

// Provenance lists the aliases in a provenance header, oldest first.
func Provenance(provenance []byte) []string {
	if len(provenance) == 0 {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(string(provenance), ",") {
		out = append(out, unescapeAlias(strings.TrimSpace(part)))
	}
	return out
}

var (
	aliasEscaper   = strings.NewReplacer("%", "%25", ",", "%2C")
	aliasUnescaper = strings.NewReplacer("%25", "%", "%2C", ",", "%2c", ",")
)

func escapeAlias(a string) string   { return aliasEscaper.Replace(a) }
func unescapeAlias(a string) string { return aliasUnescaper.Replace(a) }
