"""Contains all the data models used in inputs/outputs"""

from .account import Account
from .agent import Agent
from .agent_change import AgentChange
from .agent_change_harness_type_1 import AgentChangeHarnessType1
from .agent_change_harness_type_2_type_1 import AgentChangeHarnessType2Type1
from .agent_change_harness_type_3_type_1 import AgentChangeHarnessType3Type1
from .agent_create import AgentCreate
from .agent_create_harness_type_1 import AgentCreateHarnessType1
from .agent_create_harness_type_2_type_1 import AgentCreateHarnessType2Type1
from .agent_create_harness_type_3_type_1 import AgentCreateHarnessType3Type1
from .agent_view import AgentView
from .approval import Approval
from .approval_mode import ApprovalMode
from .approval_option import ApprovalOption
from .approval_policy import ApprovalPolicy
from .approval_status import ApprovalStatus
from .attachment import Attachment
from .attachment_create import AttachmentCreate
from .attachment_status import AttachmentStatus
from .binding_constraint import BindingConstraint
from .changed_file import ChangedFile
from .cli_drift import CliDrift
from .cli_version_run import CliVersionRun
from .cli_version_seen import CliVersionSeen
from .close_reason import CloseReason
from .code_task import CodeTask
from .code_task_status import CodeTaskStatus
from .commit_create import CommitCreate
from .committed import Committed
from .compare_diff_context import CompareDiffContext
from .compared_session import ComparedSession
from .compared_session_diffstat_type_0 import ComparedSessionDiffstatType0
from .comparison import Comparison
from .credential_source import CredentialSource
from .database_health import DatabaseHealth
from .decision import Decision
from .decision_body import DecisionBody
from .decision_scope import DecisionScope
from .delivery_state import DeliveryState
from .delivery_view import DeliveryView
from .delivery_view_payload import DeliveryViewPayload
from .disk_health import DiskHealth
from .disk_state import DiskState
from .driver_add import DriverAdd
from .driver_pinned import DriverPinned
from .driver_source import DriverSource
from .driver_used import DriverUsed
from .driver_view import DriverView
from .drivers_health import DriversHealth
from .envelope_agent_view import EnvelopeAgentView
from .envelope_agent_view_data import EnvelopeAgentViewData
from .envelope_approval import EnvelopeApproval
from .envelope_approval_data import EnvelopeApprovalData
from .envelope_attachment import EnvelopeAttachment
from .envelope_attachment_data import EnvelopeAttachmentData
from .envelope_committed import EnvelopeCommitted
from .envelope_committed_data import EnvelopeCommittedData
from .envelope_comparison import EnvelopeComparison
from .envelope_comparison_data import EnvelopeComparisonData
from .envelope_delivery_view import EnvelopeDeliveryView
from .envelope_delivery_view_data import EnvelopeDeliveryViewData
from .envelope_delivery_view_data_payload import EnvelopeDeliveryViewDataPayload
from .envelope_driver_pinned import EnvelopeDriverPinned
from .envelope_driver_pinned_data import EnvelopeDriverPinnedData
from .envelope_environment_view import EnvelopeEnvironmentView
from .envelope_environment_view_data import EnvelopeEnvironmentViewData
from .envelope_environment_view_data_env import EnvelopeEnvironmentViewDataEnv
from .envelope_message import EnvelopeMessage
from .envelope_message_data import EnvelopeMessageData
from .envelope_message_data_forked_from_type_0 import EnvelopeMessageDataForkedFromType0
from .envelope_message_data_turn_type_0 import EnvelopeMessageDataTurnType0
from .envelope_new_token import EnvelopeNewToken
from .envelope_new_token_data import EnvelopeNewTokenData
from .envelope_pushed import EnvelopePushed
from .envelope_pushed_data import EnvelopePushedData
from .envelope_resource_contents import EnvelopeResourceContents
from .envelope_resource_contents_data import EnvelopeResourceContentsData
from .envelope_server_view import EnvelopeServerView
from .envelope_server_view_data import EnvelopeServerViewData
from .envelope_server_view_data_pinned_clis import EnvelopeServerViewDataPinnedClis
from .envelope_session import EnvelopeSession
from .envelope_session_data import EnvelopeSessionData
from .envelope_task_view import EnvelopeTaskView
from .envelope_task_view_data import EnvelopeTaskViewData
from .envelope_usage_report import EnvelopeUsageReport
from .envelope_usage_report_data import EnvelopeUsageReportData
from .envelope_vec_account import EnvelopeVecAccount
from .envelope_vec_account_data_item import EnvelopeVecAccountDataItem
from .envelope_vec_agent_view import EnvelopeVecAgentView
from .envelope_vec_agent_view_data_item import EnvelopeVecAgentViewDataItem
from .envelope_vec_approval import EnvelopeVecApproval
from .envelope_vec_approval_data_item import EnvelopeVecApprovalDataItem
from .envelope_vec_attachment import EnvelopeVecAttachment
from .envelope_vec_attachment_data_item import EnvelopeVecAttachmentDataItem
from .envelope_vec_delivery_view import EnvelopeVecDeliveryView
from .envelope_vec_delivery_view_data_item import EnvelopeVecDeliveryViewDataItem
from .envelope_vec_delivery_view_data_item_payload import (
    EnvelopeVecDeliveryViewDataItemPayload,
)
from .envelope_vec_driver_view import EnvelopeVecDriverView
from .envelope_vec_driver_view_data_item import EnvelopeVecDriverViewDataItem
from .envelope_vec_environment_view import EnvelopeVecEnvironmentView
from .envelope_vec_environment_view_data_item import EnvelopeVecEnvironmentViewDataItem
from .envelope_vec_environment_view_data_item_env import (
    EnvelopeVecEnvironmentViewDataItemEnv,
)
from .envelope_vec_harness_models import EnvelopeVecHarnessModels
from .envelope_vec_harness_models_data_item import EnvelopeVecHarnessModelsDataItem
from .envelope_vec_member import EnvelopeVecMember
from .envelope_vec_member_data_item import EnvelopeVecMemberDataItem
from .envelope_vec_message import EnvelopeVecMessage
from .envelope_vec_message_data_item import EnvelopeVecMessageDataItem
from .envelope_vec_message_data_item_forked_from_type_0 import (
    EnvelopeVecMessageDataItemForkedFromType0,
)
from .envelope_vec_message_data_item_turn_type_0 import (
    EnvelopeVecMessageDataItemTurnType0,
)
from .envelope_vec_session import EnvelopeVecSession
from .envelope_vec_session_data_item import EnvelopeVecSessionDataItem
from .envelope_vec_task_view import EnvelopeVecTaskView
from .envelope_vec_task_view_data_item import EnvelopeVecTaskViewDataItem
from .envelope_vec_token import EnvelopeVecToken
from .envelope_vec_token_data_item import EnvelopeVecTokenDataItem
from .envelope_vec_webhook_view import EnvelopeVecWebhookView
from .envelope_vec_webhook_view_data_item import EnvelopeVecWebhookViewDataItem
from .envelope_webhook_view import EnvelopeWebhookView
from .envelope_webhook_view_data import EnvelopeWebhookViewData
from .environment_create import EnvironmentCreate
from .environment_create_env import EnvironmentCreateEnv
from .environment_create_secrets import EnvironmentCreateSecrets
from .environment_update import EnvironmentUpdate
from .environment_update_env import EnvironmentUpdateEnv
from .environment_update_secrets import EnvironmentUpdateSecrets
from .environment_view import EnvironmentView
from .environment_view_env import EnvironmentViewEnv
from .fan_out_session import FanOutSession
from .field_error import FieldError
from .fork_create import ForkCreate
from .fork_mode import ForkMode
from .forked_from import ForkedFrom
from .get_usage_group_by import GetUsageGroupBy
from .harness_cli_view import HarnessCliView
from .harness_log import HarnessLog
from .harness_models import HarnessModels
from .health import Health
from .health_status import HealthStatus
from .list_approvals_status import ListApprovalsStatus
from .list_messages_direction import ListMessagesDirection
from .list_tasks_owner import ListTasksOwner
from .mcp_server_kind import McpServerKind
from .mcp_server_spec import McpServerSpec
from .mcp_server_spec_env_type_0 import McpServerSpecEnvType0
from .mcp_server_spec_headers_type_0 import McpServerSpecHeadersType0
from .mcp_server_spec_headers_type_0_additional_property_type_1 import (
    McpServerSpecHeadersType0AdditionalPropertyType1,
)
from .member import Member
from .message import Message
from .message_create import MessageCreate
from .message_forked_from_type_0 import MessageForkedFromType0
from .message_kind import MessageKind
from .message_turn_type_0 import MessageTurnType0
from .meta import Meta
from .new_token import NewToken
from .problem import Problem
from .push_create import PushCreate
from .pushed import Pushed
from .rebuilt_from import RebuiltFrom
from .resource_content import ResourceContent
from .resource_contents import ResourceContents
from .revert_create import RevertCreate
from .run_events_response_200 import RunEventsResponse200
from .sandbox_health import SandboxHealth
from .sandbox_view import SandboxView
from .server_credential import ServerCredential
from .server_view import ServerView
from .server_view_pinned_clis import ServerViewPinnedClis
from .session import Session
from .session_change import SessionChange
from .session_create import SessionCreate
from .session_events_response_200 import SessionEventsResponse200
from .session_status import SessionStatus
from .session_update import SessionUpdate
from .task import Task
from .task_create import TaskCreate
from .task_diff_context import TaskDiffContext
from .task_note import TaskNote
from .task_request import TaskRequest
from .task_request_harness import TaskRequestHarness
from .task_result import TaskResult
from .task_result_unknown_events import TaskResultUnknownEvents
from .task_result_usage_type_0 import TaskResultUsageType0
from .task_status import TaskStatus
from .task_view import TaskView
from .token import Token
from .token_create import TokenCreate
from .token_owner_kind import TokenOwnerKind
from .unknown_event_seen import UnknownEventSeen
from .usage_group import UsageGroup
from .usage_report import UsageReport
from .usage_row import UsageRow
from .usage_totals import UsageTotals
from .webhook_create import WebhookCreate
from .webhook_view import WebhookView

__all__ = (
    "Account",
    "Agent",
    "AgentChange",
    "AgentChangeHarnessType1",
    "AgentChangeHarnessType2Type1",
    "AgentChangeHarnessType3Type1",
    "AgentCreate",
    "AgentCreateHarnessType1",
    "AgentCreateHarnessType2Type1",
    "AgentCreateHarnessType3Type1",
    "AgentView",
    "Approval",
    "ApprovalMode",
    "ApprovalOption",
    "ApprovalPolicy",
    "ApprovalStatus",
    "Attachment",
    "AttachmentCreate",
    "AttachmentStatus",
    "BindingConstraint",
    "ChangedFile",
    "CliDrift",
    "CliVersionRun",
    "CliVersionSeen",
    "CloseReason",
    "CodeTask",
    "CodeTaskStatus",
    "CommitCreate",
    "Committed",
    "CompareDiffContext",
    "ComparedSession",
    "ComparedSessionDiffstatType0",
    "Comparison",
    "CredentialSource",
    "DatabaseHealth",
    "Decision",
    "DecisionBody",
    "DecisionScope",
    "DeliveryState",
    "DeliveryView",
    "DeliveryViewPayload",
    "DiskHealth",
    "DiskState",
    "DriverAdd",
    "DriverPinned",
    "DriverSource",
    "DriverUsed",
    "DriverView",
    "DriversHealth",
    "EnvelopeAgentView",
    "EnvelopeAgentViewData",
    "EnvelopeApproval",
    "EnvelopeApprovalData",
    "EnvelopeAttachment",
    "EnvelopeAttachmentData",
    "EnvelopeCommitted",
    "EnvelopeCommittedData",
    "EnvelopeComparison",
    "EnvelopeComparisonData",
    "EnvelopeDeliveryView",
    "EnvelopeDeliveryViewData",
    "EnvelopeDeliveryViewDataPayload",
    "EnvelopeDriverPinned",
    "EnvelopeDriverPinnedData",
    "EnvelopeEnvironmentView",
    "EnvelopeEnvironmentViewData",
    "EnvelopeEnvironmentViewDataEnv",
    "EnvelopeMessage",
    "EnvelopeMessageData",
    "EnvelopeMessageDataForkedFromType0",
    "EnvelopeMessageDataTurnType0",
    "EnvelopeNewToken",
    "EnvelopeNewTokenData",
    "EnvelopePushed",
    "EnvelopePushedData",
    "EnvelopeResourceContents",
    "EnvelopeResourceContentsData",
    "EnvelopeServerView",
    "EnvelopeServerViewData",
    "EnvelopeServerViewDataPinnedClis",
    "EnvelopeSession",
    "EnvelopeSessionData",
    "EnvelopeTaskView",
    "EnvelopeTaskViewData",
    "EnvelopeUsageReport",
    "EnvelopeUsageReportData",
    "EnvelopeVecAccount",
    "EnvelopeVecAccountDataItem",
    "EnvelopeVecAgentView",
    "EnvelopeVecAgentViewDataItem",
    "EnvelopeVecApproval",
    "EnvelopeVecApprovalDataItem",
    "EnvelopeVecAttachment",
    "EnvelopeVecAttachmentDataItem",
    "EnvelopeVecDeliveryView",
    "EnvelopeVecDeliveryViewDataItem",
    "EnvelopeVecDeliveryViewDataItemPayload",
    "EnvelopeVecDriverView",
    "EnvelopeVecDriverViewDataItem",
    "EnvelopeVecEnvironmentView",
    "EnvelopeVecEnvironmentViewDataItem",
    "EnvelopeVecEnvironmentViewDataItemEnv",
    "EnvelopeVecHarnessModels",
    "EnvelopeVecHarnessModelsDataItem",
    "EnvelopeVecMember",
    "EnvelopeVecMemberDataItem",
    "EnvelopeVecMessage",
    "EnvelopeVecMessageDataItem",
    "EnvelopeVecMessageDataItemForkedFromType0",
    "EnvelopeVecMessageDataItemTurnType0",
    "EnvelopeVecSession",
    "EnvelopeVecSessionDataItem",
    "EnvelopeVecTaskView",
    "EnvelopeVecTaskViewDataItem",
    "EnvelopeVecToken",
    "EnvelopeVecTokenDataItem",
    "EnvelopeVecWebhookView",
    "EnvelopeVecWebhookViewDataItem",
    "EnvelopeWebhookView",
    "EnvelopeWebhookViewData",
    "EnvironmentCreate",
    "EnvironmentCreateEnv",
    "EnvironmentCreateSecrets",
    "EnvironmentUpdate",
    "EnvironmentUpdateEnv",
    "EnvironmentUpdateSecrets",
    "EnvironmentView",
    "EnvironmentViewEnv",
    "FanOutSession",
    "FieldError",
    "ForkCreate",
    "ForkMode",
    "ForkedFrom",
    "GetUsageGroupBy",
    "HarnessCliView",
    "HarnessLog",
    "HarnessModels",
    "Health",
    "HealthStatus",
    "ListApprovalsStatus",
    "ListMessagesDirection",
    "ListTasksOwner",
    "McpServerKind",
    "McpServerSpec",
    "McpServerSpecEnvType0",
    "McpServerSpecHeadersType0",
    "McpServerSpecHeadersType0AdditionalPropertyType1",
    "Member",
    "Message",
    "MessageCreate",
    "MessageForkedFromType0",
    "MessageKind",
    "MessageTurnType0",
    "Meta",
    "NewToken",
    "Problem",
    "PushCreate",
    "Pushed",
    "RebuiltFrom",
    "ResourceContent",
    "ResourceContents",
    "RevertCreate",
    "RunEventsResponse200",
    "SandboxHealth",
    "SandboxView",
    "ServerCredential",
    "ServerView",
    "ServerViewPinnedClis",
    "Session",
    "SessionChange",
    "SessionCreate",
    "SessionEventsResponse200",
    "SessionStatus",
    "SessionUpdate",
    "Task",
    "TaskCreate",
    "TaskDiffContext",
    "TaskNote",
    "TaskRequest",
    "TaskRequestHarness",
    "TaskResult",
    "TaskResultUnknownEvents",
    "TaskResultUsageType0",
    "TaskStatus",
    "TaskView",
    "Token",
    "TokenCreate",
    "TokenOwnerKind",
    "UnknownEventSeen",
    "UsageGroup",
    "UsageReport",
    "UsageRow",
    "UsageTotals",
    "WebhookCreate",
    "WebhookView",
)
