// k6 load for the rideshare demo service, the same as the demo's built-in
// driver: two scenarios, rush_hour ordering cars and scooters, off_peak bikes
// and scooters. Start the service, then run k6 from the repository root:
//
//   go run ./examples/rideshare -serve 127.0.0.1:8080
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 -e DURATION=60s examples/rideshare/load.js
//
// BASE_URL defaults to http://127.0.0.1:8080 and DURATION to 30s. Set the
// length with -e DURATION=..., not with `k6 run --duration`: that flag
// replaces the scenarios below with one default scenario, and k6 then stops
// with "function 'default' not found". --no-usage-report keeps k6 from
// sending its anonymous usage report.
//
// The helper below adds to every request the baggage header that k6labels
// turns into the pprof labels k6_test_run_id, k6_scenario and k6_name. On a
// local `k6 run` the test run id is the text "undefined", which k6labels
// skips; pass -e K6_CLOUDRUN_TEST_RUN_ID=... to set one (Grafana Cloud k6
// sets it for you).
//
// k6 fetches the helper from jslib.k6.io when the script starts. On a machine
// that cannot reach it, copy
// https://jslib.k6.io/http-instrumentation-pyroscope/1.0.2/index.js (one
// self-contained file that needs only k6/http and k6/execution) next to this
// script as http-instrumentation-pyroscope.js, from a machine that can, and
// change the import below to
//   import pyroscope from './http-instrumentation-pyroscope.js';
import http from 'k6/http';
import exec from 'k6/execution';
import { check } from 'k6';
import pyroscope from 'https://jslib.k6.io/http-instrumentation-pyroscope/1.0.2/index.js';

// From here on every request made with k6/http carries one header line
//   baggage: k6.test_run_id=<id>,k6.scenario=<scenario>,k6.name=<tags.name or URL>
// joined with "," and nothing percent-encoded (helper 1.0.2; 1.0.1 joined
// with ", "). Baggage a script sets itself comes first, then these three.
pyroscope.instrumentHTTP();

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const DURATION = __ENV.DURATION || '30s';

export const options = {
  scenarios: {
    rush_hour: { executor: 'constant-vus', vus: 2, duration: DURATION, exec: 'rushHour' },
    off_peak: { executor: 'constant-vus', vus: 1, duration: DURATION, exec: 'offPeak' },
  },
};

// order requests the next path in turn. No tags.name is set, so k6 names
// each request by its full URL, query string included; k6labels drops the
// query string so that k6_name stays one value per route.
function order(paths) {
  const i = exec.vu.iterationInScenario;
  const res = http.get(`${BASE_URL}${paths[i % paths.length]}?vehicle_id=${i}&city=berlin`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function rushHour() {
  order(['/car', '/scooter', '/car']);
}

export function offPeak() {
  order(['/bike', '/scooter', '/']);
}
