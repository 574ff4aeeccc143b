// Checks Adaptive Cards read from stdin (a JSON array of cards) and prints one JSON line per card:
// {"index": n, "problems": ["..."]}. Two checks:
//  1. Microsoft's Adaptive Cards library (npm `adaptivecards`, the renderer Teams' web client and the Agents
//     Playground build on), parsing for card version 1.5: unknown element or action types, values outside the
//     schema's enums, elements newer than 1.5, duplicate ids and the like are reported as parse or validation events.
//  2. When NAVIBOT_ADAPTIVE_CARD_SCHEMA names a copy of the official JSON schema (schemas/1.5.0/adaptive-card.json
//     of github.com/microsoft/AdaptiveCards; it is not published on npm), validation against it with ajv. The
//     card's `msteams` property (Teams' own extension, documented by Teams, outside the Adaptive Cards schema) is
//     set aside for this check.
"use strict";

const fs = require("fs");
const AC = require("adaptivecards/dist/adaptivecards.js");

function libraryProblems(json) {
    const problems = [];
    const context = new AC.SerializationContext(AC.Versions.v1_5);
    const card = new AC.AdaptiveCard();
    card.parse(json, context);
    for (let i = 0; i < context.eventCount; i++) {
        const event = context.getEventAt(i);
        problems.push(`adaptivecards parse: ${event.message}`);
    }
    for (const event of card.validateProperties().validationEvents) {
        problems.push(`adaptivecards validate: ${event.message}`);
    }
    return problems;
}

function schemaCheck() {
    const path = process.env.NAVIBOT_ADAPTIVE_CARD_SCHEMA;
    if (!path) {
        return null;
    }
    const Ajv = require("ajv").default;
    const addFormats = require("ajv-formats").default;
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addMetaSchema(require("ajv/dist/refs/json-schema-draft-06.json"));
    addFormats(ajv);
    const schema = JSON.parse(fs.readFileSync(path, "utf8"));
    delete schema.id; // draft-06 `id`: ajv 8 reads `$id`; the document is used as given
    return ajv.compile(schema);
}

function main() {
    const cards = JSON.parse(fs.readFileSync(0, "utf8"));
    const validate = schemaCheck();
    cards.forEach((card, index) => {
        const problems = libraryProblems(card);
        if (validate) {
            const { msteams: _teams, ...withoutTeams } = card;
            if (!validate(withoutTeams)) {
                for (const error of validate.errors) {
                    problems.push(`schema: ${error.instancePath || "/"} ${error.message}`);
                }
            }
        }
        console.log(JSON.stringify({ index, problems, schema: Boolean(validate) }));
    });
}

main();
