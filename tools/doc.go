// Package tools holds the agent tools that reach out of the product:
// fetch_url, take_screenshot and the admin-defined HTTP integrations, and
// the MCP and JSON API adapters that serve them.
//
// Every tool goes through the guard: a tool never opens a connection of its
// own, and every refusal is one value (code, reason, message, fix) that the
// agent reads, the refusal log keeps and the console shows. Tools know
// nothing of the store; cmd/console hands them small interfaces.
package tools
