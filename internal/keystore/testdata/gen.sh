#!/bin/sh
# Regenerates the test stores (run in this directory; needs openssl and
# Java's keytool, which the tests themselves do not). Certificates are
# valid for 100 years so the fixtures do not expire under the tests.
#
#   ca.pem                         the CA
#   server.pem                     broker key and certificate (PEM) for localhost/127.0.0.1
#   server.jks, server.p12         the same as keytool writes them: JKS (store
#                                  password serverpass, key password serverkey)
#                                  and PKCS12 (serverpass for both)
#   client.crt, client.pem         client certificate CN=Duke,OU=ServiceUsers,O=Fjord
#                                  (client.pem: key and certificate)
#   keystore.jks, keystore.p12     the client's key and chain (JKS: storepass /
#                                  keypass; PKCS12: storepass)
#   truststore.jks, truststore.p12 the CA (store password trustpass)
set -e
rm -f *.pem *.crt *.jks *.p12 *.srl *.csr *.ext *.key
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 36500 -subj "/CN=Fjord keystore test CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj "/O=Fjord/CN=localhost"
printf "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n" > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.crt -days 36500 -extfile server.ext
cat server.key server.crt > server.pem
openssl pkcs12 -export -in server.crt -inkey server.key -certfile ca.pem -out server-src.p12 -passout pass:srcpass -name broker
keytool -importkeystore -noprompt -srckeystore server-src.p12 -srcstoretype PKCS12 -srcstorepass srcpass \
  -destkeystore server.jks -deststoretype JKS -deststorepass serverpass -destkeypass serverkey
keytool -importkeystore -noprompt -srckeystore server-src.p12 -srcstoretype PKCS12 -srcstorepass srcpass \
  -destkeystore server.p12 -deststoretype PKCS12 -deststorepass serverpass
openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/O=Fjord/OU=ServiceUsers/CN=Duke"
printf "extendedKeyUsage=clientAuth\n" > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.crt -days 36500 -extfile client.ext
cat client.key client.crt > client.pem
openssl pkcs12 -export -in client.crt -inkey client.key -certfile ca.pem -out client-src.p12 -passout pass:srcpass -name client
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks -storetype JKS -storepass trustpass
keytool -importkeystore -noprompt -srckeystore client-src.p12 -srcstoretype PKCS12 -srcstorepass srcpass \
  -destkeystore keystore.jks -deststoretype JKS -deststorepass storepass -destkeypass keypass
# PKCS12 copies as keytool writes them (PBES2, AES-256-CBC).
keytool -importkeystore -noprompt -srckeystore client-src.p12 -srcstoretype PKCS12 -srcstorepass srcpass \
  -destkeystore keystore.p12 -deststoretype PKCS12 -deststorepass storepass
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 -storepass trustpass
rm -f ca.key ca.srl server.key server.crt server.csr server.ext server-src.p12 client.key client.csr client.ext client-src.p12
