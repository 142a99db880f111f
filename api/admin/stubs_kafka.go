package admin

import "net/http"

// Placeholders until the Kafka-facing handlers land (cluster.go,
// topics.go, messages.go, groups.go, history.go replace this file).

type history struct{}

func (s *Server) startHistory() {}

func notYet(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "not implemented yet")
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
func (s *Server) listBrokers(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) listTopics(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
func (s *Server) createTopic(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) getTopic(w http.ResponseWriter, r *http.Request)          { notYet(w, r) }
func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) getTopicConfigs(w http.ResponseWriter, r *http.Request)   { notYet(w, r) }
func (s *Server) alterTopicConfigs(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) addPartitions(w http.ResponseWriter, r *http.Request)     { notYet(w, r) }
func (s *Server) readMessages(w http.ResponseWriter, r *http.Request)      { notYet(w, r) }
func (s *Server) produceMessage(w http.ResponseWriter, r *http.Request)    { notYet(w, r) }
func (s *Server) listGroups(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
func (s *Server) getGroup(w http.ResponseWriter, r *http.Request)          { notYet(w, r) }
func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request)       { notYet(w, r) }
func (s *Server) resetGroupOffsets(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) getHistory(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
