// Verifies signed webhooks with the Standard Webhooks reference library,
// as a receiver would. Used by the tests of alerts/ (webhook_test.go):
// reads a JSON array of {secret, headers, body} on stdin and prints one
// line per message, "ok" or the library's error.
//
//	npm ci --prefix tools/standardwebhooks
//	echo '[{"secret":"whsec_…","headers":{…},"body":"…"}]' | node verify.mjs
import { Webhook } from 'standardwebhooks'

let input = ''
for await (const chunk of process.stdin) input += chunk
for (const { secret, headers, body } of JSON.parse(input)) {
  try {
    new Webhook(secret).verify(body, headers)
    process.stdout.write('ok\n')
  } catch (err) {
    process.stdout.write(String(err && err.message).replace(/\n/g, ' ') + '\n')
  }
}
