package mm2

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// PrintStatus writes one line per flow and topic — lag in records and in
// seconds — and per flow the age of its newest heartbeat.
func PrintStatus(w io.Writer, st []FlowStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLOW\tTOPIC\tREMOTE TOPIC\tPARTITIONS\tLAG (RECORDS)\tLAG (SECONDS)\tFROM")
	for _, fs := range st {
		if fs.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t?\t?\terror: %v\n", fs.Flow, fs.Err)
			continue
		}
		if len(fs.Topics) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tno topics to replicate\n", fs.Flow)
		}
		for _, t := range fs.Topics {
			remote, from := t.RemoteTopic, "end offsets"
			switch {
			case !t.RemoteExists:
				remote, from = t.RemoteTopic+" (not created yet)", "-"
			case t.FromOffsetSyncs:
				from = "offset syncs"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", fs.Flow, t.Topic, remote, t.Partitions, t.Records, seconds(t.Seconds), from)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, fs := range st {
		if fs.Err != nil {
			continue
		}
		if fs.HeartbeatAge < 0 {
			fmt.Fprintf(w, "%s: no heartbeats from %s on %s yet\n", fs.Flow, fs.Flow.Source, fs.Flow.Target)
		} else {
			fmt.Fprintf(w, "%s: newest heartbeat %s s old\n", fs.Flow, seconds(fs.HeartbeatAge.Seconds()))
		}
	}
	return nil
}

func seconds(s float64) string {
	if s < 0 {
		return "?"
	}
	return strconv.FormatFloat(s, 'f', 1, 64)
}
