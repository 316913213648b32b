-- Argo CD health check for redoline.io/v1alpha1 OracleCapture.
-- Install as resource.customizations.health.redoline.io_OracleCapture in argocd-cm (docs/gitops.md).
-- Argo CD runs it in gopher-lua with only the base, table and package libraries (no string
-- library), so it uses nothing but comparisons and `..`. Tested by tests/tests/it/gitops_health.rs.
--
-- Order (first match wins), following kstatus and the operator's conditions (docs/operator.md):
--   1. no status, or status.observedGeneration behind metadata.generation -> Progressing
--   2. Stalled=True (a typed stop or a configuration problem)             -> Degraded
--   3. spec.suspend                                                        -> Suspended
--   4. Reconciling=True (the capture pod is being created or rolled out)   -> Progressing
--   5. LagWithinSLA=False                                                  -> Degraded
--   6. Ready=True                                                          -> Healthy
--   7. otherwise (starting, snapshotting)                                  -> Progressing
-- The health Argo CD shows.
local function health(status, message)
  return { status = status, message = message }
end

local function condition(conditions, type)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function is(c, status)
  return c ~= nil and c.status == status
end

local function text(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return fallback
end

local status = obj.status
local generation = obj.metadata and obj.metadata.generation
if status == nil or status.observedGeneration == nil then
  return health("Progressing", "Waiting for redoline-operator to report a status")
end
if generation ~= nil and status.observedGeneration < generation then
  local message = "Waiting for redoline-operator to observe generation " .. tostring(generation)
  return health("Progressing", message)
end

local conditions = status.conditions
local stalled = condition(conditions, "Stalled")
if is(stalled, "True") then
  -- The operator starts the message with the stop code (CDC-NNNN) for a typed stop.
  return health("Degraded", text(stalled, "Stalled"))
end

if obj.spec ~= nil and obj.spec.suspend == true then
  return health("Suspended", "spec.suspend is true: the capture is scaled to zero")
end

local reconciling = condition(conditions, "Reconciling")
if is(reconciling, "True") then
  return health("Progressing", text(reconciling, "Rolling out the capture"))
end

local lag = condition(conditions, "LagWithinSLA")
if is(lag, "False") then
  return health("Degraded", text(lag, "The lag exceeds spec.sla.maxLagSeconds"))
end

local ready = condition(conditions, "Ready")
if is(ready, "True") then
  return health("Healthy", text(ready, "Streaming"))
end

return health("Progressing", text(ready, "Waiting for the capture to stream"))
