// Replaced at build time (scripts/build.sh writes dist/build-id.js with the
// same "<version>+<git hash>" compiled into every .wasm). null in the source
// tree: js/ run directly is not checked against dist/.
export const BUILD_ID = null;
