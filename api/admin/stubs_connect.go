package admin

import "net/http"

// Placeholders until the Connect-facing handlers land (schemas.go,
// pipelines.go, mirror.go replace this file).

func (s *Server) listSchemas(w http.ResponseWriter, r *http.Request)      { notYet(w, r) }
func (s *Server) getSchemaSubject(w http.ResponseWriter, r *http.Request) { notYet(w, r) }
func (s *Server) listPipelines(w http.ResponseWriter, r *http.Request)    { notYet(w, r) }
func (s *Server) getMirror(w http.ResponseWriter, r *http.Request)        { notYet(w, r) }
