// Package tools holds the agent tools that reach out of the product:
// fetch_url, take_screenshot and the admin-defined HTTP integrations, and
// the one registry that serves them over MCP, the JSON API and the CLI.
//
// A tool is one value, a Tool: its name, description, input schema with
// bounds, side-effect class and handler. Registry.Call is the one call
// path: it checks the input against the schema, runs the tool, and makes
// the call's one decision record. Adding a tool is one file holding its
// Tool value and one line in Builtin.
//
// Every tool goes through the guard: a tool never opens a connection of its
// own, and every refusal is one value (code, reason, message, fix) that the
// agent reads, the refusal log keeps and the console shows. Tools know
// nothing of the store; internal/app hands them small interfaces (Agents,
// settings as a function) and receives their decision records.
package tools
