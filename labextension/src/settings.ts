/**
 * The panel's settings (schema/panel.json), read from the setting registry's composite and
 * checked here (pure: no I/O, no DOM), and what the send key means for a key press.
 */

/** Which key press sends the message; the other Enter breaks the line. */
export type SendKey = 'Enter' | 'Ctrl+Enter';

/** The panel's settings, as the schema declares them. */
export interface IPanelSettings {
  /** The soul picked for a new panel ('' is the server's default soul). */
  readonly defaultSoul: string;
  /** `Enter`: Enter sends, Shift+Enter breaks the line; `Ctrl+Enter`: Ctrl/Cmd+Enter sends. */
  readonly sendKey: SendKey;
  /** Show the model's reasoning (collapsed) in answers. */
  readonly showReasoning: boolean;
}

/** The defaults: the same values as schema/panel.json. */
export const DEFAULT_SETTINGS: IPanelSettings = {
  defaultSoul: '',
  sendKey: 'Enter',
  showReasoning: true
};

const SEND_KEYS: readonly SendKey[] = ['Enter', 'Ctrl+Enter'];

/**
 * The settings from a composite (the registry's merge of defaults and the user's values); a
 * value of the wrong type or unknown falls back to its default, so a hand-edited file cannot
 * break the panel.
 */
export function parseSettings(composite: unknown): IPanelSettings {
  const raw = (composite && typeof composite === 'object' ? composite : {}) as {
    [key: string]: unknown;
  };
  const soul = raw.defaultSoul;
  const sendKey = raw.sendKey;
  const showReasoning = raw.showReasoning;
  return {
    defaultSoul: typeof soul === 'string' ? soul.trim() : DEFAULT_SETTINGS.defaultSoul,
    sendKey: SEND_KEYS.includes(sendKey as SendKey)
      ? (sendKey as SendKey)
      : DEFAULT_SETTINGS.sendKey,
    showReasoning:
      typeof showReasoning === 'boolean' ? showReasoning : DEFAULT_SETTINGS.showReasoning
  };
}

/** The parts of a keyboard event that decide what Enter does. */
export interface IKeyPress {
  readonly key: string;
  readonly shiftKey: boolean;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
  /** True while an input method composes (Enter then confirms the composition). */
  readonly isComposing: boolean;
}

/**
 * True when a key press in the message box sends the message. Otherwise the textarea does what
 * it does (Enter or Shift+Enter breaks the line). With `Enter`, Ctrl/Cmd+Enter sends too.
 */
export function sends(press: IKeyPress, sendKey: SendKey): boolean {
  if (press.key !== 'Enter' || press.isComposing || press.shiftKey) {
    return false;
  }
  return sendKey === 'Enter' || press.ctrlKey || press.metaKey;
}

/**
 * The message box's placeholder, naming the keys; while a run works (`steering`), what the
 * send key does then: the message goes to that run, read at its next step.
 */
export function composerHint(sendKey: SendKey, steering = false): string {
  const key = sendKey === 'Enter' ? 'Enter' : 'Ctrl+Enter';
  const other = sendKey === 'Enter' ? 'Shift+Enter' : 'Enter';
  return steering
    ? `Steer the running answer… (${key}: the agent reads it at its next step)`
    : `Ask Resolve… (${key} sends, ${other} breaks the line)`;
}
