"""The §1.6 example conversation of the history contract and its §9 wire forms, verbatim."""

HISTORY = (
    '[{"role":"system","content":"Answer briefly."},{"role":"user","content":"What is in this picture? Also roll a die.",'
    '"parts":[{"kind":"image","url":"https://example.com/cat.png"},{"kind":"image","data":"iVBORw0K","mediaType":"image/png"}],'
    '"runId":"01a028b2-c680-71b2-83d4-e5f60718293a","conversationId":"01a028b1-dc20-7edc-ba98-765432100123"},'
    '{"role":"assistant","content":"Let me check.","toolCalls":[{"id":"toolu_01","name":"roll_dice","args":{"sides":6}},'
    '{"id":"toolu_02","name":"crop_image","args":{"url":"https://example.com/cat.png"}},{"id":"toolu_03","name":"archive","args":{}}],'
    '"thinking":[{"text":"Two tasks: describe, then roll.","signature":"EqQBCkgIARAB"},{"redacted":"RW5jcnlwdGVk"}],'
    '"runId":"01a028b2-c680-71b2-83d4-e5f60718293a","conversationId":"01a028b1-dc20-7edc-ba98-765432100123"},'
    '{"role":"tool","content":"4","toolCallId":"toolu_01","toolName":"roll_dice","runId":"01a028b2-c680-71b2-83d4-e5f60718293a",'
    '"conversationId":"01a028b1-dc20-7edc-ba98-765432100123"},{"role":"tool","content":"cropped",'
    '"parts":[{"kind":"image","data":"iVBORw0K","mediaType":"image/png"}],"toolCallId":"toolu_02","toolName":"crop_image",'
    '"runId":"01a028b2-c680-71b2-83d4-e5f60718293a","conversationId":"01a028b1-dc20-7edc-ba98-765432100123"},'
    '{"role":"tool","content":"mailbox is read-only","toolCallId":"toolu_03","toolName":"archive","failed":true,'
    '"runId":"01a028b2-c680-71b2-83d4-e5f60718293a","conversationId":"01a028b1-dc20-7edc-ba98-765432100123"},'
    '{"role":"assistant","content":"A cat. You rolled a 4.","runId":"01a028b2-c680-71b2-83d4-e5f60718293a",'
    '"conversationId":"01a028b1-dc20-7edc-ba98-765432100123"}]'
)

OPENAI_MESSAGES = (
    '[{"role":"system","content":"Answer briefly."},{"role":"user","content":[{"type":"text","text":"What is in this picture? Also roll a die."},'
    '{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}}]},'
    '{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"toolu_01","type":"function","function":{"name":"roll_dice","arguments":"{\\"sides\\":6}"}},'
    '{"id":"toolu_02","type":"function","function":{"name":"crop_image","arguments":"{\\"url\\":\\"https://example.com/cat.png\\"}"}},'
    '{"id":"toolu_03","type":"function","function":{"name":"archive","arguments":"{}"}}]},{"role":"tool","content":"4","tool_call_id":"toolu_01"},'
    '{"role":"tool","content":"cropped","tool_call_id":"toolu_02"},{"role":"tool","content":"{\\"error\\":\\"mailbox is read-only\\"}","tool_call_id":"toolu_03"},'
    '{"role":"user","content":[{"type":"text","text":"\\u003ctool_result tool_name=\\"crop_image\\" tool_call_id=\\"toolu_02\\"\\u003e\\n"},'
    '{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},{"type":"text","text":"\\n\\u003c/tool_result\\u003e"}]},'
    '{"role":"assistant","content":"A cat. You rolled a 4."}]'
)

ANTHROPIC_MESSAGES = (
    '[{"role":"user","content":[{"type":"text","text":"What is in this picture? Also roll a die."},{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}},'
    '{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]},{"role":"assistant","content":[{"type":"thinking",'
    '"thinking":"Two tasks: describe, then roll.","signature":"EqQBCkgIARAB"},{"type":"redacted_thinking","data":"RW5jcnlwdGVk"},{"type":"text","text":"Let me check."},'
    '{"type":"tool_use","id":"toolu_01","name":"roll_dice","input":{"sides":6}},{"type":"tool_use","id":"toolu_02","name":"crop_image","input":{"url":"https://example.com/cat.png"}},'
    '{"type":"tool_use","id":"toolu_03","name":"archive","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"4"}]},'
    '{"type":"tool_result","tool_use_id":"toolu_02","content":[{"type":"text","text":"cropped"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]},'
    '{"type":"tool_result","tool_use_id":"toolu_03","content":[{"type":"text","text":"mailbox is read-only"}],"is_error":true}]},'
    '{"role":"assistant","content":[{"type":"text","text":"A cat. You rolled a 4."}]}]'
)
