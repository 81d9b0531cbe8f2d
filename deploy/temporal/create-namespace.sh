#!/bin/sh
# Registers the namespace onejob runs in, once the Temporal server answers; does nothing when it
# exists. docker-compose.yml runs it from Temporal's admin-tools image (its `temporal` CLI);
# cluster mode registers the same namespace, with the same retention, through the SDK
# (tools/stack/temporalCluster.ts). The job search attributes are the services' own step.
set -eu

: "${TEMPORAL_ADDRESS:?the server's frontend, host:port}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${NAMESPACE_RETENTION:=72h}"

tries=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" | grep -q SERVING; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "the Temporal server at $TEMPORAL_ADDRESS did not answer in 2 minutes" >&2
    exit 1
  fi
  sleep 2
done

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" \
  --namespace "$TEMPORAL_NAMESPACE" > /dev/null 2>&1; then
  echo "namespace $TEMPORAL_NAMESPACE exists"
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" \
    --namespace "$TEMPORAL_NAMESPACE" --retention "$NAMESPACE_RETENTION"
fi
