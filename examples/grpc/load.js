// k6 load for the gRPC example: each call carries the baggage that
// k6labels' interceptors turn into the pprof labels k6_test_run_id,
// k6_scenario and k6_name. k6's http-instrumentation-pyroscope helper
// covers k6/http only, so a gRPC script sets the metadata itself. Start the
// server, then run k6 from the examples folder:
//
//   go run ./grpc
//   k6 run --no-usage-report -e K6_CLOUDRUN_TEST_RUN_ID=build-124 grpc/load.js
import grpc from 'k6/net/grpc';
import exec from 'k6/execution';
import { check } from 'k6';

const ADDR = __ENV.ADDR || '127.0.0.1:8086';
const client = new grpc.Client();
client.load(['.'], 'labels.proto');

export const options = {
  scenarios: { rides: { executor: 'constant-vus', vus: 2, duration: __ENV.DURATION || '10s' } },
};

export default () => {
  if (exec.vu.iterationInScenario === 0) {
    client.connect(ADDR, { plaintext: true });
  }
  const baggage = `k6.test_run_id=${__ENV.K6_CLOUDRUN_TEST_RUN_ID || 'local'},` +
    `k6.scenario=${exec.scenario.name},k6.name=labels`;
  const res = client.invoke('k6labels.examples.v1.LabelService/Labels', {}, { metadata: { baggage } });
  check(res, { 'labelled': (r) => r && r.status === grpc.StatusOK && r.message.k6_scenario === exec.scenario.name });
};
