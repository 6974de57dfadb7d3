#!/bin/sh
# Regenerates the test PKI. Run once; the outputs are committed. Needs only the openssl CLI.
set -eu
cd "$(dirname "$0")"
days=36500  # 100 years: the tests must never start failing because a certificate expired.

ca() {  # ca NAME CN
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days "$days" -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.crt"
}

leaf() {  # leaf NAME CA SUBJECT EXTFILE-CONTENT
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
  openssl req -new -key "$1.key" -subj "$3" -out "$1.csr"
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -sha256 \
    -days "$days" -extfile "$1.ext" -out "$1.crt"
  rm -f "$1.csr" "$1.ext" "$2.srl"
}

ca ca "leasehold-test-ca"
leaf server ca "/CN=leasehold-fake-apiserver" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
leaf client ca "/O=system:masters/CN=leasehold-test-client" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

# A second, unrelated CA and a client certificate it signed: a client trusting only other-ca
# must refuse the fake server, and the fake server must refuse other-client.
ca other-ca "leasehold-test-other-ca"
leaf other-client other-ca "/CN=leasehold-test-other-client" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
