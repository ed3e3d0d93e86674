import { z } from 'zod';
import { compareCodePoints } from '../core/canonical.js';
import { storableText } from '../core/contracts.js';
import { ValidationError } from '../core/errors.js';
import { describeIssues, toRegistryIssues } from '../core/issues.js';
import { perUnknownKey } from './define-tool.js';

/**
 * What an agent persona may use (the original project's policy, enforced here).
 * `allowed_tools`: when non-empty, only these tool names; absent or empty means any tool.
 * `allowed_permissions`: every permission a tool requires must be in here (absent = none).
 */
export interface ToolPolicy {
  readonly persona: string;
  readonly allowed_permissions?: readonly string[] | null;
  readonly allowed_tools?: readonly string[] | null;
}

/** The verdict of `checkToolPermission`. */
export interface PermissionCheck {
  readonly allowed: boolean;
  /** `All checks passed`, `Tool '<name>' is not in the allowlist for persona '<persona>'`, or `Missing required permissions: A, B`. */
  readonly reason: string;
}

/** What `checkToolPermission` looks at: a `Tool`, or anything with a name and required permissions. */
export interface PermissionSubject {
  readonly name: string;
  readonly permissions?: { readonly required?: readonly string[] } | undefined;
}

// Strict: a misspelt field (`allowed_tool`) would otherwise silently allow every tool.
// null is accepted for the lists because Python's Optional fields serialise as null.
// Built at the first policy (zod builds a schema when it is declared; most processes have none).
const buildPolicySchema = () =>
  z.strictObject({
    // Every audit row records the persona: text no store keeps as given is refused, never altered (it was written as U+FFFD).
    persona: storableText('the persona of every audit row').min(1, { error: 'must be a non-empty string' }),
    allowed_permissions: z.array(z.string()).nullable().optional(),
    allowed_tools: z.array(z.string()).nullable().optional(),
  });
let policySchema: ReturnType<typeof buildPolicySchema> | undefined;

/** A policy checked once, ready to test many tools. */
export interface CompiledPolicy {
  readonly persona: string;
  readonly permissions: ReadonlySet<string>;
  /** `undefined`: every tool name passes the allowlist. */
  readonly tools: ReadonlySet<string> | undefined;
}

/**
 * Validates a policy object.
 * @throws VALIDATION_FAILED naming the field (`persona`, `allowed_tools[2]`, an unknown field)
 */
export function compilePolicy(policy: unknown): CompiledPolicy {
  const parsed = (policySchema ??= buildPolicySchema()).safeParse(policy);
  if (!parsed.success) {
    const issues = toRegistryIssues(parsed.error.issues.flatMap(perUnknownKey));
    throw new ValidationError(`invalid policy: ${describeIssues(issues, policy)}`, issues, { path: issues[0]?.pathText ?? '' });
  }
  const { persona, allowed_permissions: permissions, allowed_tools: tools } = parsed.data;
  return {
    persona,
    permissions: new Set(permissions ?? []),
    tools: tools === undefined || tools === null || tools.length === 0 ? undefined : new Set(tools),
  };
}

const PASSED: PermissionCheck = Object.freeze({ allowed: true, reason: 'All checks passed' });

/** The deny-first check against a compiled policy. */
export function checkCompiled(policy: CompiledPolicy, subject: PermissionSubject): PermissionCheck {
  if (policy.tools !== undefined && !policy.tools.has(subject.name)) {
    return Object.freeze({ allowed: false, reason: `Tool '${subject.name}' is not in the allowlist for persona '${policy.persona}'` });
  }
  const missing = [...new Set(subject.permissions?.required ?? [])].filter((name) => !policy.permissions.has(name));
  if (missing.length > 0) {
    return Object.freeze({ allowed: false, reason: `Missing required permissions: ${missing.sort(compareCodePoints).join(', ')}` });
  }
  return PASSED;
}

/**
 * The original project's `check_tool_permission`, deny first: a non-empty `allowed_tools`
 * without the tool denies (`Tool '<name>' is not in the allowlist for persona '<persona>'`);
 * then every required permission must be in `allowed_permissions` (else
 * `Missing required permissions: A, B`, sorted); else `{ allowed: true, reason: 'All checks passed' }`.
 * Optional permissions are never checked.
 * @throws VALIDATION_FAILED for an invalid policy; TypeError when `tool` has no string `name`
 */
export function checkToolPermission(policy: ToolPolicy, tool: PermissionSubject): PermissionCheck {
  const compiled = compilePolicy(policy);
  if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string') {
    throw new TypeError('checkToolPermission(): tool must be a Tool (an object with a string name)');
  }
  return checkCompiled(compiled, tool);
}
