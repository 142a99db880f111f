package avro

import (
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/fjordhq/fjord/api/schemaregistry"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func unhexNoT(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func newTestServer(srv *schemaregistry.Server) *httptest.Server {
	return httptest.NewServer(srv.Handler())
}
