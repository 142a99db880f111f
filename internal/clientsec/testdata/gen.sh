#!/bin/sh
# Regenerates the JKS test stores (run in this directory; needs openssl
# and Java's keytool). Certificates are valid for 100 years so the
# fixtures do not expire under the tests.
set -e
rm -f *.pem *.jks *.p12 *.srl *.csr *.ext
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 36500 -subj "/CN=Fjord JKS test CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
printf "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n" > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.crt -days 36500 -extfile server.ext
cat server.key server.crt > server.pem
openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=jks-client"
printf "extendedKeyUsage=clientAuth\n" > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.crt -days 36500 -extfile client.ext
openssl pkcs12 -export -in client.crt -inkey client.key -certfile ca.pem -out client.p12 -passout pass:p12pass -name client
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks -storetype JKS -storepass trustpass
keytool -importkeystore -noprompt -srckeystore client.p12 -srcstoretype PKCS12 -srcstorepass p12pass \
  -destkeystore keystore.jks -deststoretype JKS -deststorepass storepass -destkeypass keypass
rm -f ca.key server.key server.crt server.csr server.ext client.csr client.ext client.key ca.srl client.p12
# PKCS12 copies as keytool writes them (PBES2, AES-256-CBC).
keytool -importkeystore -noprompt -srckeystore keystore.jks -srcstoretype JKS -srcstorepass storepass -srcalias client -srckeypass keypass \
  -destkeystore keystore.p12 -deststoretype PKCS12 -deststorepass storepass -destkeypass storepass
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 -storepass trustpass
