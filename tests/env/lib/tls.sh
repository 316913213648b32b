# shellcheck shell=bash
# Sourced by the services that serve TLS with certificates of their own (kafka.sh, registry.sh):
# throw-away CAs and certificates made with openssl once per data directory, and passwords. RSA
# 2048 and 30 days: a test directory lives for a run. The caller defines die().
# (k8s.sh makes its PKI itself: EC keys and the X.509 profiles Kubernetes components check.)
#
#   make_ca DIR NAME CN
#       DIR/NAME.key and DIR/NAME.pem: a self-signed CA certificate for CN.
#   sign_cert DIR NAME CN EXTENSIONS
#       DIR/NAME.key and DIR/NAME.pem: a certificate for CN signed by the CA DIR/ca.pem (with
#       DIR/ca.key), with EXTENSIONS (lines of an openssl x509 -extfile, e.g.
#       "subjectAltName=IP:127.0.0.1" and "extendedKeyUsage=serverAuth").
#   random_secret
#       Prints a password: 18 random bytes as 24 URL-safe base64 characters.

make_ca() {
  local dir=$1 name=$2 cn=$3
  command -v openssl >/dev/null || die "openssl not found"
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.pem" \
    -days 30 -subj "/CN=$cn" >/dev/null 2>&1 || die "openssl: the CA $cn"
}

sign_cert() {
  local dir=$1 name=$2 cn=$3 ext=$4
  openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" \
    -subj "/CN=$cn" >/dev/null 2>&1 || die "openssl: the key of $name"
  printf '%s\n' "$ext" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 30 -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.pem" \
    >/dev/null 2>&1 || die "openssl: signing $name"
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

random_secret() { head -c 18 /dev/urandom | base64 | tr '+/' '-_'; }
