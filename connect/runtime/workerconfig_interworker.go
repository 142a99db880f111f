package runtime

import (
	"fmt"
	"slices"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
)

// parseInterWorker reads the inter.worker.* keys with Kafka's checks
// (DistributedConfig): known HMAC algorithms, and the signature
// algorithm among the verification algorithms.
func (w *WorkerConfig) parseInterWorker(c *connect.Config) []connect.ConfigProblem {
	w.InterWorkerKeyTTL = ms(int64(c.Int("inter.worker.key.ttl.ms")))
	w.InterWorkerKeyGenerationAlgorithm = c.String("inter.worker.key.generation.algorithm")
	if !c.IsNull("inter.worker.key.size") {
		w.InterWorkerKeySize = int(c.Int("inter.worker.key.size"))
	}
	w.InterWorkerSignatureAlgorithm = c.String("inter.worker.signature.algorithm")
	w.InterWorkerVerificationAlgorithms = c.List("inter.worker.verification.algorithms")
	var problems []connect.ConfigProblem
	bad := func(key, msg string) {
		problems = append(problems, connect.ConfigProblem{Key: key, Message: msg})
	}
	if !herder.MacAlgorithm(w.InterWorkerKeyGenerationAlgorithm) {
		bad("inter.worker.key.generation.algorithm", fmt.Sprintf("Invalid value %s for configuration inter.worker.key.generation.algorithm: Key generation algorithm must be one of %s", w.InterWorkerKeyGenerationAlgorithm, herder.MacAlgorithms()))
	}
	if w.InterWorkerKeySize < 0 || w.InterWorkerKeySize > 0 && w.InterWorkerKeySize < 128 {
		bad("inter.worker.key.size", fmt.Sprintf("Invalid value %d for configuration inter.worker.key.size: use at least 128 bits (or leave it unset for the algorithm's default)", w.InterWorkerKeySize))
	}
	if !herder.MacAlgorithm(w.InterWorkerSignatureAlgorithm) {
		bad("inter.worker.signature.algorithm", fmt.Sprintf("Invalid value %s for configuration inter.worker.signature.algorithm: Signature algorithm must be one of %s", w.InterWorkerSignatureAlgorithm, herder.MacAlgorithms()))
	}
	if len(w.InterWorkerVerificationAlgorithms) == 0 {
		bad("inter.worker.verification.algorithms", "Invalid value [] for configuration inter.worker.verification.algorithms: List must not be empty")
	}
	for _, a := range w.InterWorkerVerificationAlgorithms {
		if !herder.MacAlgorithm(a) {
			bad("inter.worker.verification.algorithms", fmt.Sprintf("Invalid value %s for configuration inter.worker.verification.algorithms: algorithms must be among %s", a, herder.MacAlgorithms()))
		}
	}
	if len(w.InterWorkerVerificationAlgorithms) > 0 && !slices.Contains(w.InterWorkerVerificationAlgorithms, w.InterWorkerSignatureAlgorithm) {
		bad("inter.worker.signature.algorithm", fmt.Sprintf("Invalid value %s for configuration inter.worker.signature.algorithm: Signature algorithm must be present in inter.worker.verification.algorithms list.", w.InterWorkerSignatureAlgorithm))
	}
	return problems
}
