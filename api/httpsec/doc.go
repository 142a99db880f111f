// Package httpsec secures a worker's HTTP listener the way Kafka
// Connect's REST server is secured, with the same worker properties:
//
// HTTPS. listeners=https://host:port serves TLS (1.2 or 1.3 only) with
// the listeners.https.ssl.* keys, or the plain ssl.* keys when no
// listeners.https.* key is set (Kafka's all-or-nothing prefix rule):
// ssl.keystore.type=PEM with ssl.keystore.location (a PEM file holding
// the private key and the certificate chain) or ssl.keystore.key +
// ssl.keystore.certificate.chain (inline PEM); ssl.truststore.type=PEM
// with ssl.truststore.location or ssl.truststore.certificates; and
// ssl.client.auth=none|requested|required (ssl.client.authentication is
// accepted as the same key). JKS and PKCS12 keystores are refused with a
// message saying how to convert them. The same settings make the client
// a worker uses to forward requests to the leader (Kafka's RestClient),
// with ssl.endpoint.identification.algorithm="" turning off host name
// checks.
//
// Authentication. Either Kafka's way —
// rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
// with a JAAS file (java.security.auth.login.config as a worker
// property, or -Djava.security.auth.login.config=... in KAFKA_OPTS)
// whose KafkaConnect section names PropertyFileLoginModule with
// file="credentials.properties" — or Fjord's keys:
//
//	fjord.rest.auth.credentials.file  user: password lines (Java properties, as Kafka's file)
//	fjord.rest.auth.tokens.file       "<token> <role> <name>" lines, sent as Authorization: Bearer <token>
//	fjord.rest.auth.read.only.users   users of the credentials file with the read-only role
//
// Roles: admin may do everything; read-only may only GET and HEAD.
// Users of the credentials file are admins (as every authenticated user
// is in Kafka) unless listed in fjord.rest.auth.read.only.users. Unlike
// Kafka, an empty credentials file is refused rather than letting
// everyone in.
//
// What is protected: everything on the listener — the Connect REST API,
// /api/v1, /ui (so a browser prompts for the password once and sends it
// on the console's API calls), /metrics and /openapi.json — except
// GET /healthz and GET /readyz (probes that cannot carry credentials and
// reveal only up/down), and Kafka's internal inter-worker requests (POST
// /connectors/{c}/tasks, PUT /connectors/{c}/fence), which Kafka also
// exempts from basic authentication because they are signed with the
// group's session key instead. Refusals are Connect's error body: 401
// with WWW-Authenticate: Basic realm="Fjord", 403 for a read-only caller
// asking to change something.
package httpsec
