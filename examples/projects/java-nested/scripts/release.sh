#!/bin/sh
# Tags a release of the service.
set -eu
git tag "ledger-$1"
