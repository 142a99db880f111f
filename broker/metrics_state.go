package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// stateCollector reports, when scraped, what the broker's state says:
// partition counts and replication health from the metadata image and the
// partition table, log sizes and offsets, group states. Nothing here is
// kept up to date on the request paths.
//
// Who reports what, so that summing a metric over a cluster's nodes
// counts each thing once:
//   - partitions, leader partitions, under-replicated and under-min-ISR
//     partitions: every broker for the partitions it hosts or leads (a
//     partition is led by one broker), as Kafka's ReplicaManager;
//   - offline partitions, active and fenced brokers: only the active
//     controller (every other node reports 0), as Kafka's controller
//     metrics. A single node is its own active controller.
type stateCollector struct{ s *Server }

var (
	descPartitions = prometheus.NewDesc("fjord_broker_partitions",
		"Partitions this broker hosts a replica of (kafka.server:type=ReplicaManager,name=PartitionCount).", nil, nil)
	descLeaderPartitions = prometheus.NewDesc("fjord_broker_leader_partitions",
		"Partitions this broker leads (kafka.server:type=ReplicaManager,name=LeaderCount).", nil, nil)
	descUnderReplicated = prometheus.NewDesc("fjord_broker_under_replicated_partitions",
		"Partitions this broker leads whose ISR is smaller than their replica set (kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions).", nil, nil)
	descUnderMinISR = prometheus.NewDesc("fjord_broker_under_min_isr_partitions",
		"Partitions this broker leads whose ISR is smaller than min.insync.replicas: acks=all produces fail (kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount).", nil, nil)
	descOffline = prometheus.NewDesc("fjord_broker_offline_partitions",
		"Partitions without a live leader, reported by the active controller only (0 on other nodes) so a sum over the cluster counts each once (kafka.controller:type=KafkaController,name=OfflinePartitionsCount).", nil, nil)
	descActiveController = prometheus.NewDesc("fjord_controller_active",
		"1 on the active controller, else 0; sums to 1 over a healthy cluster (kafka.controller:type=KafkaController,name=ActiveControllerCount).", nil, nil)
	descActiveBrokers = prometheus.NewDesc("fjord_controller_active_brokers",
		"Registered, unfenced brokers, reported by the active controller only (kafka.controller:type=KafkaController,name=ActiveBrokerCount).", nil, nil)
	descFencedBrokers = prometheus.NewDesc("fjord_controller_fenced_brokers",
		"Registered brokers the controller has fenced, reported by the active controller only (kafka.controller:type=KafkaController,name=FencedBrokerCount).", nil, nil)
	descGroups = prometheus.NewDesc("fjord_group_groups",
		"Classic groups this broker coordinates, by state (kafka.server:type=group-coordinator-metrics,name=classic-group-count,state=<state>).", []string{"state"}, nil)
	partitionLabels = []string{"topic", "partition"}
	descLogSize     = prometheus.NewDesc("fjord_log_size_bytes",
		"Bytes in the partition's log segments on this broker (kafka.log:type=Log,name=Size,topic=<topic>,partition=<partition>).", partitionLabels, nil)
	descLogStart = prometheus.NewDesc("fjord_log_start_offset",
		"The partition's log start offset on this broker (kafka.log:type=Log,name=LogStartOffset).", partitionLabels, nil)
	descLogEnd = prometheus.NewDesc("fjord_log_end_offset",
		"The partition's log end offset on this broker (kafka.log:type=Log,name=LogEndOffset).", partitionLabels, nil)
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPartitions, descLeaderPartitions, descUnderReplicated, descUnderMinISR,
		descOffline, descActiveController, descActiveBrokers, descFencedBrokers, descGroups, descLogSize, descLogStart, descLogEnd} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	img := s.image()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}

	var hosted, leading, under, underMin int
	table := s.parts.Load()
	if table != nil && img != nil {
		for _, p := range table.byKey {
			hosted++
			mp := img.Partition(p.topic, p.index)
			if mp == nil || mp.Leader != s.cfg.NodeID {
				continue
			}
			leading++
			// The replication factor leaves out replicas a reassignment
			// is adding, as Kafka's OngoingReassignmentState does.
			rf := len(mp.Replicas) - len(mp.AddingReplicas)
			if len(mp.ISR) < rf {
				under++
			}
			if st := p.settings.Load(); st != nil && len(mp.ISR) < int(st.MinInsyncReplicas) && len(mp.ISR) < rf {
				underMin++
			}
		}
		for _, p := range table.byKey {
			lbl := []string{p.topic, strconv.Itoa(int(p.index))}
			gauge(descLogSize, float64(p.log.Size()), lbl...)
			gauge(descLogStart, float64(p.log.LogStartOffset()), lbl...)
			gauge(descLogEnd, float64(p.log.LogEndOffset()), lbl...)
		}
	}
	gauge(descPartitions, float64(hosted))
	gauge(descLeaderPartitions, float64(leading))
	gauge(descUnderReplicated, float64(under))
	gauge(descUnderMinISR, float64(underMin))

	var active, offline, live, fenced float64
	if s.isActiveController() && img != nil {
		active = 1
		offline = float64(len(img.Offline()))
		for _, b := range img.Brokers {
			if b.Fenced {
				fenced++
			} else {
				live++
			}
		}
	}
	gauge(descActiveController, active)
	gauge(descOffline, offline)
	gauge(descActiveBrokers, live)
	gauge(descFencedBrokers, fenced)

	if s.groups != nil {
		for state, n := range s.groups.StateCounts() {
			gauge(descGroups, float64(n), state)
		}
	}
}

// isActiveController reports whether this node is the active controller:
// always on a single node, the raft leader in a cluster.
func (s *Server) isActiveController() bool {
	if s.local != nil {
		return true
	}
	return s.quorum != nil && s.quorum.IsActive()
}
