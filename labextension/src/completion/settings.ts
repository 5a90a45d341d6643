/** The completion settings (schema/completion.json), read defensively (pure). */

export interface ICompletionSettings {
  /** Ask for completions at all (the status-bar item flips this). */
  readonly enabled: boolean;
  /** Milliseconds of no typing before a request. */
  readonly debounce: number;
  /** Milliseconds a completion may take before it is given up. */
  readonly timeout: number;
  /** Languages (lower case) that get no completion. */
  readonly disabledLanguages: readonly string[];
  /** The model to ask; empty for the server's completion model. */
  readonly model: string;
}

export const DEFAULT_COMPLETION_SETTINGS: ICompletionSettings = {
  enabled: true,
  debounce: 250,
  timeout: 10000,
  disabledLanguages: [],
  model: ''
};

function count(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Settings from the registry's composite; a missing or ill-typed field takes its default. */
export function parseCompletionSettings(raw: unknown): ICompletionSettings {
  const source = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const d = DEFAULT_COMPLETION_SETTINGS;
  const languages = Array.isArray(source.disabledLanguages)
    ? source.disabledLanguages.filter((l): l is string => typeof l === 'string')
    : d.disabledLanguages;
  return {
    enabled: typeof source.enabled === 'boolean' ? source.enabled : d.enabled,
    debounce: count(source.debounce, d.debounce),
    timeout: count(source.timeout, d.timeout),
    disabledLanguages: languages.map(l => l.trim().toLowerCase()).filter(l => l !== ''),
    model: typeof source.model === 'string' ? source.model.trim() : d.model
  };
}

/** True when `language` gets completions under these settings. */
export function languageEnabled(settings: ICompletionSettings, language: string): boolean {
  return settings.enabled && !settings.disabledLanguages.includes(language.toLowerCase());
}
