package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupList lists the cluster's groups with their state and protocol type.
func GroupList(ctx context.Context, co *ClientOptions, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	lgs, err := c.Admin.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	type row struct {
		Group        string `json:"group"`
		State        string `json:"state"`
		ProtocolType string `json:"protocol_type"`
		Coordinator  int32  `json:"coordinator"`
	}
	rows := []row{}
	for _, g := range lgs.Sorted() {
		rows = append(rows, row{g.Group, g.State, g.ProtocolType, g.Coordinator})
	}
	if p.JSONMode() {
		return p.JSON(rows)
	}
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.Group, dash(r.State), dash(r.ProtocolType), strconv.Itoa(int(r.Coordinator))})
	}
	return p.Table([]string{"GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR"}, cells)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type groupMemberJSON struct {
	MemberID   string              `json:"member_id"`
	InstanceID *string             `json:"instance_id"`
	ClientID   string              `json:"client_id"`
	Host       string              `json:"host"`
	Assignment []topicPartitionsJS `json:"assignment"`
	// AssignmentText describes non-consumer assignments (e.g. Connect's).
	AssignmentText string `json:"assignment_text,omitempty"`
}

type topicPartitionsJS struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

type groupOffsetJSON struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	MemberID      string `json:"member_id,omitempty"`
	Host          string `json:"host,omitempty"`
	ClientID      string `json:"client_id,omitempty"`
	Error         string `json:"error,omitempty"`
}

type describedGroupJSON struct {
	Group        string            `json:"group"`
	State        string            `json:"state"`
	ProtocolType string            `json:"protocol_type"`
	Protocol     string            `json:"protocol"`
	Coordinator  int32             `json:"coordinator"`
	Members      []groupMemberJSON `json:"members"`
	Offsets      []groupOffsetJSON `json:"offsets"`
	TotalLag     int64             `json:"total_lag"`
}

// GroupDescribe shows, like `kafka-consumer-groups --describe`, each
// group (every group when none is named) with its state and members, and per partition the committed offset, the
// log end offset and the lag, with the total lag. A partition without a
// committed offset shows "-" for both offset and lag, as Kafka does: its lag
// depends on the consumers' reset policy.
func GroupDescribe(ctx context.Context, co *ClientOptions, groups []string, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if len(groups) == 0 {
		// Like kafka-consumer-groups --all-groups.
		lgs, err := c.Admin.ListGroups(ctx)
		if err != nil {
			return fmt.Errorf("list groups: %w", err)
		}
		groups = lgs.Groups()
		if len(groups) == 0 {
			if p.JSONMode() {
				return p.JSON([]describedGroupJSON{})
			}
			p.Linef("No groups.")
			return nil
		}
	}
	lags, err := c.Admin.Lag(ctx, groups...)
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	var errs []error
	var out []describedGroupJSON
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		l, ok := lags[g]
		if !ok {
			errs = append(errs, groupErr(g, kerr.GroupIDNotFound))
			continue
		}
		if err := l.Error(); err != nil {
			errs = append(errs, groupErr(g, err))
			continue
		}
		if l.State == "Dead" && len(l.Members) == 0 && len(l.Lag) == 0 {
			errs = append(errs, groupErr(g, kerr.GroupIDNotFound))
			continue
		}
		out = append(out, describeGroupLag(l))
	}
	if p.JSONMode() {
		if out == nil {
			out = []describedGroupJSON{}
		}
		if err := p.JSON(out); err != nil {
			return err
		}
	} else {
		for i, d := range out {
			if i > 0 {
				p.Linef("")
			}
			if err := printDescribedGroup(p, d); err != nil {
				return err
			}
		}
	}
	return errors.Join(errs...)
}

func describeGroupLag(l kadm.DescribedGroupLag) describedGroupJSON {
	d := describedGroupJSON{
		Group: l.Group, State: l.State, ProtocolType: l.ProtocolType, Protocol: l.Protocol,
		Coordinator: l.Coordinator.NodeID, Members: []groupMemberJSON{}, Offsets: []groupOffsetJSON{},
	}
	for _, m := range l.Members {
		gm := groupMemberJSON{
			MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
			Assignment: []topicPartitionsJS{},
		}
		if ca, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range ca.Topics {
				ps := append([]int32(nil), t.Partitions...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				gm.Assignment = append(gm.Assignment, topicPartitionsJS{t.Topic, ps})
			}
			sort.Slice(gm.Assignment, func(i, j int) bool { return gm.Assignment[i].Topic < gm.Assignment[j].Topic })
		} else if ca, ok := m.Assigned.AsConnect(); ok {
			gm.AssignmentText = fmt.Sprintf("leader=%s connectors=%d tasks=%d", ca.Leader, len(ca.Assignment), countConnectTasks(ca.Assignment))
		} else if raw, ok := m.Assigned.Raw(); ok && len(raw) > 0 {
			gm.AssignmentText = fmt.Sprintf("(%d bytes, protocol type %s)", len(raw), l.ProtocolType)
		}
		d.Members = append(d.Members, gm)
	}
	for _, ml := range l.Lag.Sorted() {
		o := groupOffsetJSON{Topic: ml.Topic, Partition: ml.Partition}
		if ml.Member != nil {
			o.MemberID, o.Host, o.ClientID = ml.Member.MemberID, ml.Member.ClientHost, ml.Member.ClientID
		}
		if ml.End.Err == nil {
			end := ml.End.Offset
			o.LogEndOffset = &end
		}
		if ml.Commit.At >= 0 {
			cur := ml.Commit.At
			o.CurrentOffset = &cur
			if ml.Err == nil && ml.Lag >= 0 {
				lag := ml.Lag
				o.Lag = &lag
				d.TotalLag += lag
			}
		}
		if ml.Err != nil {
			o.Error = ml.Err.Error()
		}
		d.Offsets = append(d.Offsets, o)
	}
	return d
}

func countConnectTasks(as []kmsg.ConnectMemberAssignmentAssignment) int {
	n := 0
	for _, a := range as {
		n += len(a.Tasks)
	}
	return n
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func printDescribedGroup(p *Printer, d describedGroupJSON) error {
	protocol := d.ProtocolType
	if d.Protocol != "" {
		protocol += "/" + d.Protocol
	}
	p.Linef("Group: %s  State: %s  Protocol: %s  Coordinator: %d  Members: %d",
		d.Group, d.State, dash(protocol), d.Coordinator, len(d.Members))
	if len(d.Members) > 0 {
		var rows [][]string
		for _, m := range d.Members {
			inst := "-"
			if m.InstanceID != nil {
				inst = *m.InstanceID
			}
			rows = append(rows, []string{m.MemberID, inst, m.ClientID, m.Host, memberAssignment(m)})
		}
		p.Linef("")
		if err := p.Table([]string{"MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"}, rows); err != nil {
			return err
		}
	}
	if len(d.Offsets) == 0 {
		p.Linef("")
		p.Linef("No committed offsets or assigned partitions.")
		return nil
	}
	showErr := false
	for _, o := range d.Offsets {
		showErr = showErr || o.Error != ""
	}
	header := []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID", "HOST", "CLIENT-ID"}
	if showErr {
		header = append(header, "ERROR")
	}
	var rows [][]string
	for _, o := range d.Offsets {
		r := []string{o.Topic, strconv.Itoa(int(o.Partition)), optInt(o.CurrentOffset), optInt(o.LogEndOffset),
			optInt(o.Lag), dash(o.MemberID), dash(o.Host), dash(o.ClientID)}
		if showErr {
			r = append(r, o.Error)
		}
		rows = append(rows, r)
	}
	p.Linef("")
	if err := p.Table(header, rows); err != nil {
		return err
	}
	p.Linef("")
	p.Linef("Total lag: %d", d.TotalLag)
	return nil
}

func memberAssignment(m groupMemberJSON) string {
	if m.AssignmentText != "" {
		return m.AssignmentText
	}
	var parts []string
	for _, a := range m.Assignment {
		parts = append(parts, a.Topic+":"+joinInt32s(a.Partitions))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// GroupDelete deletes groups and their committed offsets. Kafka refuses a
// group that still has members (NON_EMPTY_GROUP).
func GroupDelete(ctx context.Context, co *ClientOptions, groups []string, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	resps, err := c.Admin.DeleteGroups(ctx, groups...)
	if err != nil {
		return fmt.Errorf("delete groups: %w", err)
	}
	type result struct {
		Group   string `json:"group"`
		Deleted bool   `json:"deleted"`
		Error   string `json:"error,omitempty"`
	}
	var results []result
	var errs []error
	for _, g := range groups {
		r, ok := resps[g]
		var gerr error
		switch {
		case !ok:
			gerr = groupErr(g, errors.New("the broker's answer did not mention the group"))
		case r.Err != nil:
			gerr = groupErr(g, brokerErr(r.Err, r.ErrMessage))
		}
		if gerr != nil {
			errs = append(errs, gerr)
			results = append(results, result{Group: g, Error: gerr.Error()})
			continue
		}
		results = append(results, result{Group: g, Deleted: true})
	}
	if p.JSONMode() {
		if err := p.JSON(results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Deleted {
				p.Linef("Deleted group %s.", r.Group)
			}
		}
	}
	return errors.Join(errs...)
}
